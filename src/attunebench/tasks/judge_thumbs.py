"""`judge_thumbs`: the judge's rubric score of a real bot reply, against the person's thumb
(docs/tasks.md, paragraph "Judge audit across turns"). The headline is the mean of the
agreement on liked and on disliked replies, so a judge that scores everything high gets 0.5.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from attunebench import tasks
from attunebench.answerform import TaskHint, dumps
from attunebench.data.schema import Conversation, Response
from attunebench.frozen import Frozen
from attunebench.judge.forms import RubricAnswers
from attunebench.stats import FloatArray, Weights, safe_ratio
from attunebench.tasks.helpers import history, judging, metrics
from attunebench.tasks.helpers.pairs import talked_to_model

TASK = "judge_thumbs"
LIKED_FROM = 6  # rubric scores of 6-10 read as "they would like it"
MIDDLE = 0.5  # without a declared scale; a rating exactly at the middle is no thumb


class ThumbGold(tasks.Gold):
    """The person's own thumb on one bot reply."""

    level: tasks.GoldLevel = "reply"
    rating: float
    liked: bool
    model: str | None = None


class ThumbAnswers(RubricAnswers):
    """The rubric answer, the thumb saying which side of the middle is right (not registered
    a second time: every judge answers it as the rubric)."""

    gold_answers = True

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        high = bool(gold["liked"]) == right
        low, top = (LIKED_FROM, 10) if high else (1, LIKED_FROM - 1)
        return dumps({"score": int(rng.integers(low, top + 1)), "reason": "from the thumb"})


THUMB_ANSWERS = ThumbAnswers()


class ThumbPrediction(Frozen):
    score: float


def middle(conversation: Conversation) -> float:
    """The middle of the source's rating scale (0.5 for thumbs, 0 down and 1 up)."""
    scale = conversation.source.rating_scale
    return MIDDLE if scale is None else (scale.low + scale.high) / 2


def thumb(conversation: Conversation, reply: Response) -> bool | None:
    """The person's thumb on the reply: up (True), down (False), or none (not rated, or a
    merged run of messages rated half up and half down)."""
    mid = middle(conversation)
    return None if reply.rating is None or reply.rating == mid else reply.rating > mid


ThumbView = tasks.View[ThumbGold, ThumbPrediction]


def counts(views: Sequence[ThumbView]) -> FloatArray:
    """Per record: agreement and count on liked replies, then on disliked ones."""
    rows = np.zeros((len(views), 4))
    for row, view in zip(rows, views, strict=True):
        if view.status == "failed" or view.score is None:
            continue
        side = 0 if view.gold.liked else 2
        row[side], row[side + 1] = view.score, 1.0
    return rows


def balanced(values: FloatArray, weights: Weights) -> FloatArray:
    sums = weights.sum(values)
    liked = safe_ratio(sums[..., 0], sums[..., 1])
    disliked = safe_ratio(sums[..., 2], sums[..., 3])
    return (liked + disliked) / 2


class JudgeThumbsScoring(tasks.Scoring[ThumbGold, ThumbPrediction]):
    headline = "balanced agreement of the judge's rubric score with the person's thumb"
    headline_metric = "balanced_agreement"

    metrics = metrics.register(
        TASK,
        metrics.column_metric("score", "share of replies where the judge agrees with the thumb"),
        metrics.Metric("balanced_agreement", headline, counts, balanced),
    )


@tasks.register_task(TASK)
class JudgeThumbsTask(tasks.Task[ThumbGold, ThumbPrediction], scoring=JudgeThumbsScoring):
    """The judge's rubric score of each thumbed bot reply against the thumb; needs a `--judge`.

    `participant_context`: informed, blind, or both."""

    name = TASK
    gold_fields = ("rating",)
    subject_forms = (THUMB_ANSWERS,)
    evaluates = "judges"
    needs_judge = True
    templates = (judging.RUBRIC,)

    def __init__(self, participant_context: str = "both", seed: int = 0) -> None:
        super().__init__(participant_context)

    def items(self, conversations: Iterable[Conversation]) -> Iterator[tasks.Item[ThumbGold]]:
        for conversation in conversations:
            if not talked_to_model(conversation):
                continue
            for turn in conversation.turns:
                for reply in turn.responses:
                    liked = thumb(conversation, reply)
                    if liked is None or reply.rating is None:  # the second for the type checker
                        continue
                    gold = ThumbGold(rating=reply.rating, liked=liked, model=reply.model)
                    yield from tasks.in_contexts(self, conversation, turn.index, reply.id, gold)

    def left_out(self, conversations: Sequence[Conversation]) -> dict[str, int]:
        halves = sum(
            r.rating == middle(c)
            for c in conversations
            if talked_to_model(c)
            for t in c.turns
            for r in t.responses
        )
        return {"bot replies rated half up, half down": halves}

    def queries(self, item: tasks.Item[ThumbGold], mode: tasks.AnswerMode) -> list[tasks.Query]:
        turn = history.turn_at(item.conversation, item.turn_index)
        reply = turn.response(item.item_id)
        assert reply is not None
        profile = judging.profile_of(item.conversation, turn, informed=item.context == "informed")
        context = judging.JudgeContext.at(item.conversation, item.turn_index, profile)
        return [judging.rubric_query(context, reply.text, "rubric", judge=None, form=THUMB_ANSWERS)]

    def parse(
        self, item: tasks.Item[ThumbGold], outputs: Mapping[str, tasks.Output]
    ) -> ThumbPrediction:
        return ThumbPrediction(
            score=float(judging.parse_rubric(outputs["rubric"].text or "")["score"])
        )

    def score(self, item: tasks.Item[ThumbGold], prediction: ThumbPrediction) -> tasks.Scored:
        agrees = (prediction.score >= LIKED_FROM) == item.gold.liked
        return tasks.Scored(float(agrees), {"judge_score": prediction.score})

    def worst(self, item: tasks.Item[ThumbGold], partial: ThumbPrediction | None) -> tasks.Scored:
        return tasks.Scored(0.0, {"judge_score": None})
