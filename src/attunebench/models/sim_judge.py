"""`sim/judge`: a simulated judge with planted biases, to test the judge statistics.

A test instrument, labelled `simulated`. Like `sim/oracle` it reads the item's gold, so it
knows which reply the participant preferred (the judge audit's pick; in the response task,
the evaluated reply against its reference). Every draw is made once per comparison, not per
order. In this order, with the option's probability, it names: the reply shown first
(`position`), the reply of a model in `favour` (`favour_by`), the longer reply (`longer`), and
the participant's preference (`accuracy`, default 1; otherwise a uniform draw of first, second
or tie). Each bias moves a reply's expected win by an affine function of the participant's
verdict, so the bias a report should recover is known in closed form."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from pydantic import Field

from attunebench.answerform import HintKind, TaskHint
from attunebench.frozen import Frozen
from attunebench.models.base import (
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    ProviderError,
    keyed_rng,
)

FIRST, SECOND, TIE = "first", "second", "tie"
# Query keys that name the order a comparison is shown in (response task; judge audit).
ORDER_MARKS = ("model-first", "reference-first")
AUDIT_ORDERS = ("ab", "ba")


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
