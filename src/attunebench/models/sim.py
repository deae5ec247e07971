"""`sim/oracle`: a simulated model that answers from the item's gold at a planted accuracy.

A test instrument for validating the statistics through the real pipeline, never a model under
test: reports label it `simulated`, and it counts as a model under test only with
`--include-simulated`. It declares `reads_gold`, so the engine hands it each item's gold (no
other provider ever sees it), and it answers every task whose answer form can write the gold's
answer (see `attunebench.answerform`). Options (models file `options`, or keywords):

- `seed`: fixes every draw, per item;
- `accuracy`: a table by task (`{ emotion = 0.6, behavior = 0.4, preference = 0.8 }`), the
  chance of answering the gold; otherwise a wrong answer the task's form draws (another label,
  the other reply; for numbers a uniform draw on the scale). For the response task, the
  chance that its reply is the one the participant chose (otherwise the one they rejected).
  Tasks not in the table get 0.5.
- `reads`: what its answers depend on, to plant a person gap (`run --person both`). `gold`
  (the default) draws each variant of an item (blind, informed, person-hidden) afresh.
  `replies` answers an item alike in every variant: it never reads the person, so its person
  gap is 0. `person` reads the person's own words: where its prompt holds only the
  placeholder of a person-hidden twin (`data.person`), it answers at chance (a valid answer
  drawn at random by the task's form), elsewhere as `replies` does, so its person gap is its
  score above chance.

Whether an item is answered right is drawn once per item, so both orders of a pair agree.

`sim/person-oracle` (`models.sim_person`) is the simulated person the simulated users are
validated with; `sim/judge` (`models.sim_judge`) a judge with planted biases.
"""

from __future__ import annotations

import json
from typing import Any, Literal, TypeVar
from urllib.parse import parse_qsl

import numpy as np
from pydantic import Field, ValidationError, field_validator

from attunebench.answerform import AnswerForm, HintKind, TaskHint
from attunebench.data.person import PLACEHOLDER
from attunebench.frozen import Frozen, problem_text
from attunebench.models.base import (
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    Provider,
    ProviderError,
    keyed_rng,
)
from attunebench.models.registry import PROVIDERS, SpecError
from attunebench.registry import did_you_mean

DEFAULT_ACCURACY = 0.5


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


class GoldReader(NamedProvider):
    """A `sim/` instrument that writes its answers from each item's gold (`sim/oracle`,
    `sim/person-oracle`): every form that can write the gold's answer, and nothing else."""

    cacheable = False  # its answers follow the gold, which the cache key does not hold
    reads_gold = True

    def answers_form(self, form: AnswerForm) -> bool:
        return form.gold_answers

    def unsupported_reason(self, kind: HintKind) -> str:
        return f"{self.spec} cannot write a {kind!r} answer from its gold"


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

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        if hint is None or hint.gold is None or hint.form is None:
            raise ProviderError(f"{self.spec} answers from an item's gold", retryable=False)
        if self.options.reads == "person" and any(PLACEHOLDER in m.content for m in messages):
            text = hint.form.random(hint, self._rng(hint, "chance"))  # nothing of theirs to read
        else:
            text = self.answer(hint, hint.gold)
        return ModelOutput(text=text, finish_reason="stop")

    def answer(self, hint: TaskHint, gold: dict[str, Any]) -> str:
        if hint.form is None or not hint.form.gold_answers:
            raise ProviderError(self.unsupported_reason(hint.kind), retryable=False)
        return hint.form.from_gold(hint, gold, self._right(hint), self._rng(hint, "draw"))


@PROVIDERS.register("sim")
def make_sim(model: str, **options: Any) -> Provider:
    name = model.partition("?")[0]
    if name == "judge":  # a judge with planted biases, kept in its own module
        from attunebench.models.sim_judge import make_sim_judge

        return make_sim_judge(**options)
    if name == "person-oracle":  # a simulated person with planted faults, in its own module
        from attunebench.models.sim_person import PersonOptions, PersonOracle

        query = model.partition("?")[2]  # `sim/person-oracle?calm=0.5`, as on a command line
        given = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
        return PersonOracle(_options(PersonOptions, model, {**given, **options}))
    if name != "oracle":
        near = did_you_mean(name, ("oracle", "person-oracle", "judge"))
        raise SpecError(
            f"model spec 'sim/{model}': the simulated models are oracle, person-oracle and "
            f"judge{near}"
        )
    return Oracle(model, _options(OracleOptions, model, options))


OptionsT = TypeVar("OptionsT", bound=Frozen)


def _options(kind: type[OptionsT], model: str, options: dict[str, Any]) -> OptionsT:
    try:
        return kind.model_validate(options)
    except ValidationError as error:  # worded as the baselines' options are, not pydantic's dump
        problems = "; ".join(
            f"option {'.'.join(map(str, e['loc'])) or '(all)'}: " + problem_text(e)
            for e in error.errors()
        )
        raise SpecError(f"model spec 'sim/{model}': {problems}") from None
