"""`sim/oracle`: a simulated model that answers from the item's gold at a planted accuracy.

A test instrument for validating the statistics through the real pipeline, labelled
`simulated`. It declares `reads_gold`, so the engine hands it each item's gold. Options: `seed`;
`accuracy` by task (default 0.5), the chance of answering the gold, else a wrong answer the
task's form draws; `reads`, to plant a person gap: `gold` draws each variant of an item
afresh, `replies` answers every variant alike (gap 0), `person` answers at chance where the
prompt holds a person-hidden twin's placeholder. Whether an item is answered right is drawn
once per item, so both orders of a pair agree.

`sim/person-oracle`: a simulated person who answers as the real one did, with planted faults,
for validating simulated users; unfaulted, a replay of it equals the gold. Its faults, each
between 0 and 1: `noise`, the chance of a random valid answer (drawn per item and per rollout
seed); `position`, the chance of answering with the first option shown; `calm`, the share of
the way each intensity is pulled toward 1, "barely". `seed` fixes every draw, made per item,
not per order."""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl

import numpy as np
from pydantic import Field

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
CALM_END = 1.0  # the bottom of the format's intensity scale: "barely"
INTENSITY = "intensity"  # the dataset format's field, as a gold carries it


class OracleOptions(Frozen):
    seed: int = 0
    # By task name; the engine refuses a name no task has (`engine.wiring`), as a misspelt
    # task would silently get the default accuracy.
    accuracy: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]] = Field(default_factory=dict)
    reads: Literal["gold", "replies", "person"] = "gold"


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


@PROVIDERS.register("sim")
def make_sim(model: str, **options: Any) -> Provider:
    name = model.partition("?")[0]
    if name == "judge":  # a judge with planted biases, kept in its own module
        from attunebench.models.sim_judge import JudgeOptions, SimJudge

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
