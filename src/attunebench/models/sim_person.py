"""`sim/person-oracle`: a simulated person who answers as the real one did, with planted faults.

A test instrument for validating simulated users, labelled `simulated`; like `sim/oracle` it
reads the gold, and unfaulted a replay of it equals the gold. Its faults, each between 0 and 1:
`noise`, the chance of a random valid answer (drawn per item and per rollout seed);
`position`, the chance of answering with the first option shown; `calm`, the share of the way
each intensity is pulled toward 1, "barely". `seed` fixes every draw, made per item, not per
order."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from pydantic import Field

from attunebench.answerform import TaskHint
from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams, Message, ModelOutput, ProviderError, keyed_rng
from attunebench.models.sim import GoldReader

CALM_END = 1.0  # the bottom of the format's intensity scale: "barely"
INTENSITY = "intensity"  # the dataset format's field, as a gold carries it


class PersonOptions(Frozen):
    seed: int = 0
    noise: float = Field(default=0.0, ge=0.0, le=1.0)
    position: float = Field(default=0.0, ge=0.0, le=1.0)
    calm: float = Field(default=0.0, ge=0.0, le=1.0)


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

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        if hint is None or hint.gold is None or hint.form is None:
            raise ProviderError(f"{self.spec} answers from an item's gold", retryable=False)
        if not hint.form.gold_answers:
            raise ProviderError(self.unsupported_reason(hint.kind), retryable=False)
        return ModelOutput(text=self.answer(hint, hint.gold, params.seed), finish_reason="stop")

    def answer(self, hint: TaskHint, gold: dict[str, Any], rollout: int | None) -> str:
        form, options = hint.form, self.options
        assert form is not None
        if self._rng(hint, rollout, "noise").random() < options.noise:
            return form.random(hint, self._rng(hint, rollout, "random"))
        if self._rng(hint, None, "position").random() < options.position:
            return form.example(hint)
        draw = self._rng(hint, rollout, "draw")
        return form.from_gold(hint, calmed(gold, options.calm), True, draw)
