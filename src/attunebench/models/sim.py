"""`sim/oracle`: a simulated model that answers from the item's gold at a planted accuracy.

A test instrument for validating the statistics through the real pipeline, never a model under
test: reports label it `simulated`, and it counts as a model under test only with
`--include-simulated`. It declares `reads_gold`, so the engine hands it each item's gold (no
other provider ever sees it). Options (models file `options`, or keywords):

- `seed`: fixes every draw, per item;
- `accuracy`: a table by task (`{ emotion = 0.6, behavior = 0.4, preference = 0.8 }`), the
  chance of answering the gold; otherwise a wrong answer drawn at random (another label,
  the other reply); for numbers (intensity, rating, outcome fields) a miss is a uniform draw
  on the scale. Tasks not in the table get 0.5;
- `response_quality`: for the response task, how often its reply is the reply the
  participant chose (otherwise the one they rejected).

Whether an item is answered right is drawn once per item, so both orders of a pair agree.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
from pydantic import Field, ValidationError, field_validator

from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams, Message, ModelOutput, Provider, ProviderError
from attunebench.models.hints import HintKind, TaskHint
from attunebench.models.registry import PROVIDERS, SpecError

KINDS: frozenset[HintKind] = frozenset(
    {"emotion", "behavior", "preference", "rating", "outcome", "response", "judge_pairwise"}
)
TASK_OF = {"judge_pairwise": "judge_audit"}
DEFAULT_ACCURACY = 0.5


class OracleOptions(Frozen):
    seed: int = 0
    accuracy: dict[str, float] = Field(default_factory=dict)
    response_quality: float = Field(default=0.5, ge=0.0, le=1.0)

    @field_validator("accuracy")
    @classmethod
    def _known_tasks(cls, accuracy: dict[str, float]) -> dict[str, float]:
        """A misspelt task would silently get the default accuracy: refuse it."""
        tasks = sorted({TASK_OF.get(kind, kind) for kind in KINDS})
        for task, chance in accuracy.items():
            if task not in tasks:
                raise ValueError(f"{task!r} is not a task it answers ({', '.join(tasks)})")
            if not 0.0 <= chance <= 1.0:
                raise ValueError(f"{task} = {chance} is not a chance between 0 and 1")
        return accuracy


class Oracle(Provider):
    supported_hints = KINDS
    cacheable = False  # its answers follow the gold, which the cache key does not hold
    reads_gold = True

    def __init__(self, name: str, options: OracleOptions) -> None:
        self._spec = f"sim/{name}"
        self.options = options

    @property
    def spec(self) -> str:
        return self._spec

    def _rng(self, hint: TaskHint, salt: str) -> np.random.Generator:
        item = hint.item_key.rsplit("|", 1)[0]  # the item, not the order it is asked in
        key = json.dumps([self.options.seed, salt, item]).encode()
        return np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))

    def _right(self, hint: TaskHint, task: str) -> bool:
        chance = self.options.accuracy.get(task, DEFAULT_ACCURACY)
        return bool(self._rng(hint, "right").random() < chance)

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        if hint is None or hint.gold is None:
            raise ProviderError(f"{self.spec} answers from an item's gold", retryable=False)
        text = self.answer(hint, hint.gold)
        return ModelOutput(text=text, finish_reason="stop")

    def answer(self, hint: TaskHint, gold: dict[str, Any]) -> str:
        task = TASK_OF.get(hint.kind, hint.kind)
        right = self._right(hint, task)
        rng = self._rng(hint, "draw")
        if hint.kind == "emotion":
            return json.dumps(self._emotion(hint, gold, right, rng))
        if hint.kind == "behavior":
            labels = list(hint.labels)
            truth = list(gold.get("behaviors", []))
            wrong = [label for label in labels if label not in truth] or labels
            return json.dumps(
                {"behaviors": truth if right else [wrong[int(rng.integers(len(wrong)))]]}
            )
        if hint.kind in ("preference", "judge_pairwise"):
            return json.dumps(self._pick(hint, gold, right))
        if hint.kind == "rating":
            low, high = (float(x) for x in hint.labels)
            return json.dumps({"rating": gold["rating"] if right else _uniform(rng, low, high)})
        if hint.kind == "outcome":
            values: dict[str, float] = gold.get("values", {})
            return json.dumps(
                {
                    name: values[name] if right and name in values else _uniform(rng, *scale)
                    for name, scale in gold.get("scales", {}).items()
                    if name in hint.labels
                }
            )
        chosen = rng.random() < self.options.response_quality  # "response"
        return str(gold.get("chosen_text" if chosen else "rejected_text") or "I hear you.")

    def _emotion(
        self, hint: TaskHint, gold: dict[str, Any], right: bool, rng: np.random.Generator
    ) -> dict[str, Any]:
        labels = list(hint.labels)
        truth = gold.get("primary") or next(iter(gold.get("emotions") or []), None)
        others = [label for label in labels if label != truth] or labels
        primary = truth if right and truth else others[int(rng.integers(len(others)))]
        answer: dict[str, Any] = {"primary": primary, "emotions": [primary]}
        for name, (low, high) in (("intensity", (1, 5)), ("valence", (-1, 1)), ("arousal", (0, 1))):
            if gold.get(name) is not None:
                answer[name] = gold[name] if right else _uniform(rng, low, high)
        return answer

    def _pick(self, hint: TaskHint, gold: dict[str, Any], right: bool) -> dict[str, str]:
        order = hint.item_key.rsplit("|", 1)[-1]
        first, second = gold["first"], gold["second"]
        a = first if order == "ab" else second
        truth = "tie" if gold.get("tie") else ("A" if gold.get("chosen") == a else "B")
        if not right:
            truth = {"A": "B", "B": "A", "tie": "A"}[truth]
        field = "winner" if hint.kind == "judge_pairwise" else "choice"
        return {field: truth, "reason": "simulated"} if field == "winner" else {field: truth}


def _uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """A uniform draw on a scale: whole steps where the scale is of whole numbers."""
    if float(low).is_integer() and float(high).is_integer():
        return float(rng.integers(int(low), int(high) + 1))
    return float(rng.uniform(low, high))


@PROVIDERS.register("sim")
def make_sim(model: str, **options: Any) -> Provider:
    if model.partition("?")[0] == "judge":  # a judge with planted biases, kept in its own module
        from attunebench.models.sim_judge import make_sim_judge

        return make_sim_judge(**options)
    if model.partition("?")[0] != "oracle":
        raise SpecError(f"model spec 'sim/{model}': the simulated models are oracle and judge")
    try:
        parsed = OracleOptions.model_validate(options)
    except ValidationError as error:  # worded as the baselines' options are, not pydantic's dump
        problems = "; ".join(
            f"option {'.'.join(map(str, e['loc'])) or '(all)'}: "
            + e["msg"].removeprefix("Value error, ")
            for e in error.errors()
        )
        raise SpecError(f"model spec 'sim/{model}': {problems}") from None
    return Oracle(model, parsed)
