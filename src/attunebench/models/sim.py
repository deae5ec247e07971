"""`sim/`: simulated instruments that answer from the item's gold (`reads_gold`: the engine
hands it to them), to validate the statistics through the real pipeline; labelled `simulated`.
Every draw is keyed by the seed and the item, not the order it is asked in.

`sim/oracle` answers the gold at a planted accuracy by task (default 0.5), else a wrong answer
the task's form draws; `reads` plants a person gap: `gold` draws each variant of an item
afresh, `replies` answers every variant alike (gap 0), `person` answers at chance where the
prompt holds a person-hidden twin's placeholder.

`sim/person-oracle` is a simulated person who answers as the real one did (unfaulted, a replay
equals the gold), with faults between 0 and 1: `noise`, the chance of a random valid answer
(drawn per item and rollout seed); `position`, of answering with the first option shown;
`calm`, the share of the way each intensity is pulled toward 1, "barely".

`sim/judge` has planted biases, to test the judge statistics. It knows which reply the
participant preferred (the judge audit's pick; in the response task, the evaluated reply
against its reference) and, in this order, with the option's probability, names: the reply
shown first (`position`), the reply of a model in `favour` (`favour_by`), the longer reply
(`longer`), and the participant's preference (`accuracy`, default 1; otherwise a uniform draw
of first, second or tie). Each bias moves a reply's expected win by an affine function of the
participant's verdict, so the bias a report should recover is known in closed form."""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import Any, Literal
from urllib.parse import parse_qsl

import numpy as np
from pydantic import Field, field_validator

from attunebench.answerform import AnswerForm, HintKind, TaskHint
from attunebench.data.person import PLACEHOLDER
from attunebench.frozen import Frozen
from attunebench.models.base import (
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    Provider,
    ProviderError,
    keyed_rng,
)
from attunebench.models.registry import PROVIDERS, SpecError, spec_options
from attunebench.registry import did_you_mean

DEFAULT_ACCURACY = 0.5
FIRST, SECOND, TIE = "first", "second", "tie"
# Query keys that name the order a comparison is shown in (response task; judge audit).
ORDER_MARKS = ("model-first", "reference-first")
AUDIT_ORDERS = ("ab", "ba")
CALM_END = 1.0  # the bottom of the format's intensity scale: "barely"
INTENSITY = "intensity"  # the dataset format's field, as a gold carries it


class OracleOptions(Frozen):
    seed: int = 0
    # By task name; the engine refuses a name no task has (`engine.wiring`), as a misspelt
    # task would silently get the default accuracy.
    accuracy: dict[str, float] = Field(default_factory=dict)
    reads: Literal["gold", "replies", "person"] = "gold"

    @field_validator("accuracy")
    @classmethod
    def _chances(cls, accuracy: dict[str, float]) -> dict[str, float]:
        for task, chance in accuracy.items():
            if not 0.0 <= chance <= 1.0:
                raise ValueError(f"{task} = {chance} is not a chance between 0 and 1")
        return accuracy


class PersonOptions(Frozen):
    seed: int = 0
    noise: float = Field(default=0.0, ge=0.0, le=1.0)
    position: float = Field(default=0.0, ge=0.0, le=1.0)
    calm: float = Field(default=0.0, ge=0.0, le=1.0)


class GoldReader(NamedProvider):
    """A `sim/` instrument writing its answers from the item's gold, in every form that can."""

    cacheable = False  # its answers follow the gold, which the cache key does not hold
    reads_gold = True

    def answers_form(self, form: AnswerForm) -> bool:
        return form.gold_answers

    def unsupported_reason(self, kind: HintKind) -> str:
        return f"{self.spec} cannot write a {kind!r} answer from its gold"

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        if hint is None or hint.gold is None or hint.form is None:
            raise ProviderError(f"{self.spec} answers from an item's gold", retryable=False)
        if not hint.form.gold_answers:
            raise ProviderError(self.unsupported_reason(hint.kind), retryable=False)
        return ModelOutput(text=self.written(messages, params, hint), finish_reason="stop")

    @abstractmethod
    def written(self, messages: list[Message], params: GenerateParams, hint: TaskHint) -> str:
        """The answer to `hint`, whose form writes answers from the gold it carries."""


class Oracle(GoldReader):
    def __init__(self, name: str, options: OracleOptions) -> None:
        super().__init__(f"sim/{name}")
        self.options = options

    def tasks_named(self) -> tuple[str, ...]:
        return tuple(self.options.accuracy)

    def _rng(self, hint: TaskHint, salt: str) -> np.random.Generator:
        item = hint.item_key.rsplit("|", 1)[0]  # the item, not the order it is asked in
        if self.options.reads != "gold":
            item = item.rsplit("|", 1)[0]  # nor the variant: an item's twins drawn alike
        return keyed_rng(json.dumps([self.options.seed, salt, item]))

    def _right(self, hint: TaskHint) -> bool:
        chance = self.options.accuracy.get(hint.task, DEFAULT_ACCURACY)
        return bool(self._rng(hint, "right").random() < chance)

    def written(self, messages: list[Message], params: GenerateParams, hint: TaskHint) -> str:
        assert hint.form is not None and hint.gold is not None
        if self.options.reads == "person" and any(PLACEHOLDER in m.content for m in messages):
            return hint.form.random(hint, self._rng(hint, "chance"))  # nothing of theirs to read
        return hint.form.from_gold(hint, hint.gold, self._right(hint), self._rng(hint, "draw"))


def calmed(gold: dict[str, Any], calm: float) -> dict[str, Any]:
    """The gold with its intensity pulled `calm` of the way toward "barely".

    >>> calmed({"intensity": 5.0}, 0.5)
    {'intensity': 3.0}
    """
    value = gold.get(INTENSITY)
    if not calm or not isinstance(value, int | float):
        return gold
    return {**gold, INTENSITY: CALM_END + (1.0 - calm) * (float(value) - CALM_END)}


class PersonOracle(GoldReader):
    def __init__(self, options: PersonOptions) -> None:
        super().__init__("sim/person-oracle")
        self.options = options

    def _rng(self, hint: TaskHint, rollout: int | None, salt: str) -> np.random.Generator:
        item = hint.item_key.rsplit("|", 1)[0]  # the item, not the order it is asked in
        return keyed_rng(json.dumps([self.options.seed, rollout, salt, item]))

    def written(self, messages: list[Message], params: GenerateParams, hint: TaskHint) -> str:
        form, options, rollout = hint.form, self.options, params.seed
        assert form is not None and hint.gold is not None
        if self._rng(hint, rollout, "noise").random() < options.noise:
            return form.random(hint, self._rng(hint, rollout, "random"))
        if self._rng(hint, None, "position").random() < options.position:
            return form.example(hint)
        draw = self._rng(hint, rollout, "draw")
        return form.from_gold(hint, calmed(hint.gold, options.calm), True, draw)


class JudgeOptions(Frozen):
    seed: int = 0
    accuracy: float = Field(default=1.0, ge=0.0, le=1.0)
    position: float = Field(default=0.0, ge=0.0, le=1.0)
    favour: tuple[str, ...] = ()
    favour_by: float = Field(default=0.0, ge=0.0, le=1.0)
    longer: float = Field(default=0.0, ge=0.0, le=1.0)


class Comparison(Frozen):
    """One question in content terms: authors, lengths, truth, and whether the first is A."""

    unit: str
    authors: tuple[str | None, str | None]
    lengths: tuple[int, int]
    truth: str  # FIRST, SECOND or TIE: the participant's view
    first_shown_first: bool


def audit_comparison(hint: TaskHint, gold: dict[str, Any]) -> Comparison:
    item, _, order = hint.item_key.rpartition("|")
    first = gold["first"]
    chosen = None if gold.get("tie") else gold.get("chosen")
    truth = TIE if chosen is None else (FIRST if chosen == first else SECOND)
    return Comparison(
        unit=item,
        authors=(gold.get("first_model"), gold.get("second_model")),
        lengths=(int(gold["len_first"]), int(gold["len_second"])),
        truth=truth,
        first_shown_first=order == AUDIT_ORDERS[0],
    )


def response_comparison(hint: TaskHint, gold: dict[str, Any]) -> Comparison:
    """The evaluated reply is `first`, the reference (chosen or rejected) `second`."""
    item, _, key = hint.item_key.rpartition("|")
    comparison = key.partition("/")[0]
    reply = hint.candidates["A" if ORDER_MARKS[0] in key else "B"]
    chosen, rejected = str(gold.get("chosen_text", "")), str(gold.get("rejected_text", ""))
    quality = 1.0 if reply == chosen else 0.0 if reply == rejected else 0.5
    reference = 1.0 if comparison == "vs_chosen" else 0.0
    truth = TIE if quality == reference else (FIRST if quality > reference else SECOND)
    other = chosen if comparison == "vs_chosen" else rejected
    return Comparison(
        unit=f"{item}|{comparison}|{hint.subject}|{key.partition('@')[2]}",
        authors=(hint.subject or None, None),
        lengths=(len(reply), len(other)),
        truth=truth,
        first_shown_first=ORDER_MARKS[0] in key,
    )


class SimJudge(NamedProvider):
    supported_hints: frozenset[HintKind] = frozenset({"judge_pairwise", "judge_rubric"})
    cacheable = False  # its verdicts follow the gold, which the cache key does not hold
    reads_gold = True

    def __init__(self, options: JudgeOptions) -> None:
        super().__init__("sim/judge")
        self.options = options

    def _draws(self, unit: str) -> np.ndarray[Any, Any]:
        return keyed_rng(json.dumps([self.options.seed, unit])).random(5)

    def pick(self, comparison: Comparison) -> str:
        """FIRST, SECOND or TIE, in content terms (see the module docstring for the order)."""
        o = self.options
        u = self._draws(comparison.unit)
        favoured = [author in o.favour for author in comparison.authors]
        a, b = comparison.lengths
        if u[0] < o.position:
            return FIRST if comparison.first_shown_first else SECOND
        if favoured[0] != favoured[1] and u[1] < o.favour_by:
            return FIRST if favoured[0] else SECOND
        if a != b and u[2] < o.longer:
            return FIRST if a > b else SECOND
        if u[3] < o.accuracy:
            return comparison.truth
        return (FIRST, SECOND, TIE)[min(int(u[4] * 3), 2)]

    def score(self, hint: TaskHint, gold: dict[str, Any]) -> int:
        """A rubric score: 8 for the participant's chosen reply (or a real model's reply they
        liked), 2 for the rejected one (or one they disliked), 5 for any other; 10 for a
        favoured model's reply at the favouring rate."""
        reply = hint.candidates.get("A", "")
        favoured = hint.subject in self.options.favour
        if favoured and self._draws(f"{hint.item_key}|{hint.subject}")[1] < self.options.favour_by:
            return 10
        liked = gold.get("real_liked") if reply == gold.get("real_text") else None
        if reply == gold.get("chosen_text") or liked is True:
            return 8
        return 2 if reply == gold.get("rejected_text") or liked is False else 5

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        if hint is None or hint.gold is None:
            raise ProviderError("sim/judge answers from the item's gold", retryable=False)
        gold = hint.gold
        if hint.kind == "judge_rubric":
            answer: dict[str, Any] = {"score": self.score(hint, gold)}
        else:
            found = (audit_comparison if "first" in gold else response_comparison)(hint, gold)
            picked = self.pick(found)
            if picked == TIE:
                answer = {"winner": "tie"}
            else:
                answer = {"winner": "A" if (picked == FIRST) == found.first_shown_first else "B"}
        text = json.dumps({**answer, "reason": "simulated"})
        return ModelOutput(text=text, finish_reason="stop")


@PROVIDERS.register("sim")
def make_sim(model: str, **options: Any) -> Provider:
    name = model.partition("?")[0]
    if name == "judge":
        return SimJudge(spec_options(JudgeOptions, f"sim/{model}", options))
    if name == "person-oracle":
        query = model.partition("?")[2]  # `sim/person-oracle?calm=0.5`, as on a command line
        given = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
        return PersonOracle(spec_options(PersonOptions, f"sim/{model}", {**given, **options}))
    if name != "oracle":
        near = did_you_mean(name, ("oracle", "person-oracle", "judge"))
        raise SpecError(
            f"model spec 'sim/{model}': the simulated models are oracle, person-oracle and "
            f"judge{near}"
        )
    return Oracle(model, spec_options(OracleOptions, f"sim/{model}", options))
