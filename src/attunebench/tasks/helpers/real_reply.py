"""The real reply in a chat a person held with a model, judged beside the evaluated model's.

In ConvAI1's human-bot chats each message got one reply from a real chatbot, which the person
thumbed up or down. The judges score that reply with the same rubric, never told the thumb;
the score is kept in each model's record (`real_rubric`) and read back as a reference row
(`REFERENCE`), never ranked, with the thumb beside it: the mean score of liked and of disliked
replies and the AUROC of the score against the thumb (Hanley & McNeil 1982).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from attunebench.data.schema import Conversation, Response, Turn
from attunebench.stats import FloatArray, IntArray
from attunebench.tasks.base import JudgedVerdict
from attunebench.tasks.helpers import metrics
from attunebench.tasks.helpers.calibration import auroc_statistic
from attunebench.tasks.helpers.judging import mean
from attunebench.tasks.helpers.pairs import talked_to_model

REFERENCE = "reference/real-reply"
QUERY = "real"  # judge query keys: real/rubric@JUDGE
VALUE = "real_rubric"  # record values: real_rubric (the judges' mean), real_rubric[JUDGE]


def real_reply(conversation: Conversation, turn: Turn) -> Response | None:
    """The one reply a real model gave at this turn of a chat the person held with it."""
    if not talked_to_model(conversation):
        return None
    replies = [r for r in turn.responses if r.text.strip()]
    return replies[0] if len(replies) == 1 else None


def real_values(verdicts: Sequence[JudgedVerdict], judges: Sequence[str]) -> dict[str, float]:
    """Each judge's rubric score of the real reply and their mean. Unlike a model's answer, an
    unusable verdict is no score (not the lowest): the real reply has no score to protect."""
    values: dict[str, float] = {}
    for judge in judges:
        mine = [v for v in verdicts if v.query.model == judge and v.verdict.status == "ok"]
        if (score := mean([float((v.verdict.parsed or {})["score"]) for v in mine])) is not None:
            values[f"{VALUE}[{judge}]"] = score
    if (panel := mean(list(values.values()))) is not None:
        values[VALUE] = panel
    return values


def _scored(view: Any, liked: bool) -> float | None:
    """The real reply's rubric score where the person's thumb on it was `liked`."""
    return view.value(VALUE) if view.gold.real_liked is liked else None


def thumb_rows(views: Sequence[Any]) -> tuple[FloatArray, IntArray]:
    """Per real reply with a thumb and a score: (the score, 1 if liked), and its view's index."""
    rows, owners = [], []
    for index, view in enumerate(views):
        score, liked = view.value(VALUE), view.gold.real_liked
        if score is not None and liked is not None:
            rows.append((score, float(liked)))
            owners.append(index)
    return np.array(rows, dtype=np.float64).reshape(-1, 2), np.array(owners, dtype=np.int64)


def _mean(name: str, description: str, liked: bool) -> metrics.Metric:
    metric = metrics.mean_metric(name, description, lambda view: _scored(view, liked))
    return replace(metric, of_references=True)


METRICS = (
    _mean("real_rubric_thumb_up", "mean rubric score of real replies given a thumb up", True),
    _mean("real_rubric_thumb_down", "mean rubric score of real replies given a thumb down", False),
    metrics.Metric(
        "real_thumb_auroc",
        "agreement of the real replies' rubric score with the person's thumb (AUROC; 0.5 is "
        "chance)",
        thumb_rows,
        auroc_statistic,
        of_references=True,
    ),
)
