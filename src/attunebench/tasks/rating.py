"""`rating`: predict how the person rated the replies so far, at each point they rated them.

Construct: pointwise preference anticipation. Where a person rated the other side every few
messages (ESConv seeker feedback, 1-5: `Turn.feedback`), the model reads the conversation up to
that point and predicts the rating. Ratings drift over a conversation, so a position-only
reference, the rating predicted from the turn's place in its conversation alone, is scored
beside every model: the mean rating at that third of a conversation (early, middle, late) over
the other conversations.

Per item the score is one minus the absolute error as a share of the scale (a missing rating:
the whole range). The metrics are Spearman's rho within conversations (averaged over the
conversations with at least three ratings), pooled Spearman, MAE and coverage.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from attunebench.answerform import AnswerForm, dumps, registered, stated_scale, uniform
from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import taxonomy_of
from attunebench.models.hints import TaskHint
from attunebench.records import PromptInfo
from attunebench.stats import FloatArray, Weights
from attunebench.tasks import history as h
from attunebench.tasks import metrics as m
from attunebench.tasks import numeric as n
from attunebench.tasks.base import (
    AnswerMode,
    Gold,
    GoldLevel,
    Item,
    Output,
    Query,
    Reference,
    Scored,
    Task,
    View,
    register_task,
)
from attunebench.tasks.calibration import calibration_metrics
from attunebench.tasks.prompting import JSON_PARAMS, self_reports_block, task_prompt, transcript

TASK = "rating"
PROMPT = task_prompt(__name__, "rating")
CHOICE = task_prompt(__name__, "rating-choice")
FIELD = "rating"
THIRDS = 3


class RatingAnswers(AnswerForm):
    """`{"rating": n}`, from a hint carrying the last reply rated as `text` and the scale as
    `labels` (low, high)."""

    kind = TASK
    marker = '{"rating"'

    def example(self, hint: TaskHint) -> str:
        return dumps({"rating": 3})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        low, high = _scale(hint)
        return dumps({"rating": round(float(rng.integers(int(low), int(high) + 1)), 3)})

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        return dumps({"rating": gold["rating"] if right else uniform(rng, *_scale(hint))})

    def read_prompt(self, system: str, user: str) -> TaskHint | None:
        hint = super().read_prompt(system, user)
        if hint is None:
            return None
        low, high = stated_scale(user)  # the question's own scale
        return TaskHint(kind=TASK, labels=(f"{low:g}", f"{high:g}"), form=self)


def _scale(hint: TaskHint) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in hint.labels)
    except ValueError:
        raise ValueError("the rating hint carries no scale") from None
    return low, high


ANSWERS = registered(RatingAnswers())


class RatingGold(Gold):
    level: GoldLevel = "rating"
    rating: float
    scale: tuple[float, float] = (1.0, 5.0)
    position: float  # the turn's place in its conversation, 0 (first) to 1 (last)

    @property
    def third(self) -> int:
        return min(int(self.position * THIRDS), THIRDS - 1)


def rating_golds(conversation: Conversation) -> Iterator[tuple[int, RatingGold]]:
    scale = conversation.source.rating_scale
    bounds = (scale.low, scale.high) if scale is not None else (1.0, 5.0)
    last = max(conversation.turns[-1].index, 1)
    for turn in conversation.turns:
        if turn.feedback is not None:
            gold = RatingGold(rating=turn.feedback, scale=bounds, position=turn.index / last)
            yield turn.index, gold


class RatingTask(Task[RatingGold, n.Numbers]):
    name = TASK
    gold_type = RatingGold
    prediction_type = n.Numbers
    headline = "1 - absolute error as a share of the scale"
    gold_fields = ("rating",)
    subject_forms = (ANSWERS,)
    answer_modes = ("generate", "choice")

    def __init__(self, context: str = h.DEFAULT_CONTEXT) -> None:
        self.modes = h.context_modes(context)

    @property
    def prompts(self) -> list[PromptInfo]:
        return [PROMPT.info, CHOICE.info]

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item[RatingGold]]:
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for turn_index, gold in rating_golds(conversation):
                for mode in self.modes:
                    yield Item(TASK, conversation, turn_index, "feedback", taxonomy, gold, mode)

    def queries(self, item: Item[RatingGold], mode: AnswerMode) -> list[Query]:
        conversation, (low, high) = item.conversation, item.gold.scale
        said = h.history_before(conversation, item.turn_index)
        variant = item.context
        reports = h.self_reports_before(conversation, item.turn_index)
        fields = {
            "conversation": transcript(said),
            "self_reports": self_reports_block(variant, reports, conversation),
        }
        replies = [u.text for u in said if u.speaker == "assistant"]
        hint = TaskHint(
            kind=TASK,
            text=replies[-1] if replies else "",
            labels=(f"{low:g}", f"{high:g}"),
            history=h.hint_history(said),
            form=ANSWERS,
        )
        if mode == "generate":
            messages = PROMPT.render(
                **fields,
                low=f"{low:g}",
                high=f"{high:g}",
                low_means="very poor",
                high_means="very good",
            )
            return [Query("answer", messages, PROMPT.info, JSON_PARAMS, hint)]
        base = CHOICE.render(**fields)
        question = (
            f"How did the user rate the assistant's replies since their previous rating, "
            f"from {low:g} (very poor) to {high:g} (very good)?"
        )
        forms = n.choice_forms(base, {FIELD: question}, {FIELD: item.gold.scale})
        return [Query(k, base, CHOICE.info, JSON_PARAMS, hint, choice=f) for k, f in forms.items()]

    def parse(self, item: Item[RatingGold], outputs: Mapping[str, Output]) -> n.Numbers:
        return n.read_numbers(outputs, {FIELD: item.gold.scale})

    def score(self, item: Item[RatingGold], prediction: n.Numbers) -> Scored:
        return n.scored({FIELD: item.gold.rating}, {FIELD: item.gold.scale}, prediction)

    def choice_gold(self, item: Item[RatingGold], query: Query) -> str | None:
        rating = item.gold.rating
        return str(int(rating)) if float(rating).is_integer() else None

    def calibration_rows(self, view: RatingView) -> list[tuple[Mapping[str, float], str]]:
        return _calibration_rows(view)

    def worst(self, item: Item[RatingGold], partial: n.Numbers | None) -> Scored:
        return n.scored({FIELD: item.gold.rating}, {FIELD: item.gold.scale}, None)

    def references(self) -> dict[str, Reference[RatingGold]]:
        return {"reference/position-only": position_only}


def position_only(items: Sequence[tuple[str, RatingGold]]) -> list[float | None]:
    """Each item scored as if predicted by the mean rating at its third of a conversation in
    the other conversations (none there: no score)."""
    totals: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    own: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for conversation, gold in items:
        for table in (totals[gold.third], own[conversation, gold.third]):
            table[0] += gold.rating
            table[1] += 1
    out: list[float | None] = []
    for conversation, gold in items:
        total, mine = totals[gold.third], own[conversation, gold.third]
        others = total[1] - mine[1]
        if others == 0:
            out.append(None)
            continue
        guess = (total[0] - mine[0]) / others
        low, high = gold.scale
        out.append(1.0 - abs(guess - gold.rating) / (high - low))
    return out


RatingView = View[RatingGold, n.Numbers]


def _pair(view: RatingView, name: str) -> tuple[float | None, float | None]:
    guess = view.prediction.values.get(FIELD) if view.parsed and view.prediction else None
    return guess, view.gold.rating


def within_conversations(views: Sequence[RatingView]) -> FloatArray:
    """Per record (rho of its conversation / its conversation's items, 1 / items), for the
    conversations with three or more answered ratings and a defined rho; zeros otherwise. A
    ratio of weighted sums then averages rho over conversations, each weighted as drawn."""
    by_conversation: dict[str, list[int]] = defaultdict(list)
    for i, view in enumerate(views):
        by_conversation[view.record.conversation_id].append(i)
    out = np.zeros((len(views), 2))
    for rows in by_conversation.values():
        found = m.pairs([_pair(views[i], FIELD) for i in rows])
        usable = ~np.isnan(found).any(axis=1)
        if usable.sum() < 3:
            continue
        rho = float(m.spearman_statistic(found[usable], Weights.ones(int(usable.sum())))[0])
        if not np.isnan(rho):
            out[rows] = (rho / len(rows), 1.0 / len(rows))
    return out


def _calibration_rows(view: RatingView) -> list[tuple[Mapping[str, float], str]]:
    return n.digit_rows(view.prediction, {FIELD: view.gold.rating})


RatingTask.metrics = m.register(
    TASK,
    *calibration_metrics(_calibration_rows),
    m.column_metric("score", RatingTask.headline),
    m.Metric(
        "within_conversation_spearman",
        "Spearman's rho within each conversation, averaged "
        "over conversations with three or more ratings",
        within_conversations,
        m.ratio_statistic,
    ),
    *n.field_metrics(FIELD, (1.0, 5.0), _pair),
)


@register_task(TASK)
def rating_task(context: str = h.DEFAULT_CONTEXT, seed: int = 0) -> RatingTask:
    """Rating prediction at each point the person rated; `context` is blind, informed or both."""
    return RatingTask(context)
