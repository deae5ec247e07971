"""The judge's two answers (see `attunebench.answerform`): a pairwise verdict
`{"winner": "A" | "B" | "tie", "reason": ...}` and a rubric score `{"score": 1-10, "reason": ...}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from attunebench.answerform import (
    AnswerForm,
    PairAnswers,
    Schema,
    TaskHint,
    dumps,
    gold_pick,
    in_scale,
    obj,
    one_of,
    registered,
)

# A verdict's reason, short enough to fit the judge's token budget with the verdict around it.
REASON: Schema = {"type": "string", "maxLength": 400}


class PairwiseAnswers(PairAnswers):
    kind = "judge_pairwise"
    marker = '{"winner"'

    def example(self, hint: TaskHint) -> str:
        return dumps({"winner": "A", "reason": "mock verdict"})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        return dumps({"winner": "AB"[int(rng.integers(2))], "reason": "a coin flip"})

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        return dumps({"winner": gold_pick(hint, gold, right), "reason": "simulated"})

    def schema(self, hint: TaskHint) -> Schema:
        return obj({"winner": one_of(("A", "B", "tie")), "reason": REASON})


class RubricAnswers(AnswerForm):
    kind = "judge_rubric"
    marker = '{"score"'
    gold_answers = False  # a reply's score has no gold

    def example(self, hint: TaskHint) -> str:
        return dumps({"score": 5, "reason": "mock verdict"})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        return dumps({"score": int(rng.integers(1, 11)), "reason": "a uniform score"})

    def schema(self, hint: TaskHint) -> Schema:
        return obj({"score": in_scale(1, 10, whole=True), "reason": REASON})


PAIRWISE_ANSWERS = registered(PairwiseAnswers())
RUBRIC_ANSWERS = registered(RubricAnswers())
