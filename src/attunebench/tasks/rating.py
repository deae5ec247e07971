"""`rating`: predict how the person rated the replies so far, at each point they rated them.

An item is a turn with feedback (`Turn.feedback`), or else each reply the person rated, read
through that reply (`data.derived.rated_replies` keeps one rating from counting twice). Ratings
drift over a conversation and sit near the corpus mean, so an error-based score is won by a
constant: the headline is the position-adjusted correlation (`tasks.helpers.adjusted`; its
cell: docs/tasks.md, "Headlines no trivial strategy can win").
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from attunebench import answerform, tasks
from attunebench.answerform import TaskHint
from attunebench.data.derived import rated_replies
from attunebench.data.schema import Conversation
from attunebench.prompts import PromptTemplate
from attunebench.stats import FloatArray, Weights
from attunebench.tasks.helpers import adjusted, grouping, history, metrics, numeric, prompting

TASK = "rating"
PROMPT = tasks.task_prompt(__name__, "rating")
CHOICE = tasks.task_prompt(__name__, "rating-choice")
REPLY = tasks.task_prompt(__name__, "rating-reply")
REPLY_CHOICE = tasks.task_prompt(__name__, "rating-reply-choice")
FEEDBACK = "feedback"  # the item id of a rating given with a user message
REPLY_ITEM = "reply:"  # the item id of a reply's own rating: this, then the reply's id
FIELD = "rating"
THIRDS = 3


class RatingAnswers(answerform.AnswerForm):
    """`{"rating": n}`, the last reply rated in the hint's `text`, the scale in its `labels`; a
    baseline reads the person's last message too: what they said as well as were told."""

    kind = TASK
    marker = '{"rating"'

    def example(self, hint: TaskHint) -> str:
        return answerform.dumps({"rating": 3})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        low, high = answerform.labelled_scale(hint)
        return answerform.dumps({"rating": round(float(rng.integers(int(low), int(high) + 1)), 3)})

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        rating = (
            gold["rating"] if right else answerform.uniform(rng, *answerform.labelled_scale(hint))
        )
        return answerform.dumps({"rating": rating})

    def reads(self, hint: TaskHint) -> tuple[str, ...]:
        said = [text for role, text in hint.history if role == "user"]
        return (said[-1] if said else "", hint.text)

    def schema(self, hint: TaskHint) -> answerform.Schema | None:
        try:
            return answerform.obj({"rating": answerform.in_scale(*answerform.labelled_scale(hint))})
        except ValueError:  # a hint made by hand, with no scale: no form to hold it to
            return None

    def read_prompt(self, system: str, user: str) -> TaskHint | None:
        hint = super().read_prompt(system, user)
        if hint is None:
            return None
        low, high = answerform.stated_scale(user)  # the question's own scale
        return TaskHint(labels=(f"{low:g}", f"{high:g}"), form=self)


ANSWERS = answerform.registered(RatingAnswers())


class RatingGold(tasks.Gold):
    level: tasks.GoldLevel = "rating"
    rating: float
    scale: tuple[float, float] = (1.0, 5.0)
    position: float  # the turn's place in its conversation, 0 (first) to 1 (last)
    visible: int | None = None  # messages the prompt shows
    reply_chars: int | None = None  # characters of the replies rated (since the last rating)
    reported: str | None = None  # the last self-report the informed prompt shows
    answer_fields = ("rating", "scale")  # a rating stays on its own scale

    @property
    def third(self) -> int:
        return min(int(self.position * THIRDS), THIRDS - 1)

    @property
    def shown_bin(self) -> int:
        return grouping.shown_bin(self.visible)

    def shown(self) -> grouping.Shown:
        return grouping.Shown(self.shown_bin, self.reply_chars or 0, self.reported)

    @property
    def cell(self) -> tuple[tuple[float, ...], int, int]:
        """The position cell the headline adjusts for, within one rating scale (thumbs and
        1-5 ratings never share a mean)."""
        return tuple(self.scale), self.third, self.shown_bin  # a list when read unvalidated


def rating_golds(conversation: Conversation) -> Iterator[tuple[int, str, RatingGold]]:
    """(turn index, item id, gold) of each feedback turn, then of each reply whose own rating
    is an item."""
    scale = conversation.source.rating_scale
    bounds = (scale.low, scale.high) if scale is not None else (1.0, 5.0)
    last = max(conversation.turns[-1].index, 1)
    previous = -1
    for turn in conversation.turns:
        if turn.feedback is None:
            continue
        said = history.history_before(conversation, turn.index)
        rated = [
            u.text
            for u in said
            if u.speaker == "assistant" and u.turn_index is not None and u.turn_index >= previous
        ]
        gold = RatingGold(
            rating=turn.feedback,
            scale=bounds,
            position=turn.index / last,
            visible=len(said),
            reply_chars=sum(len(text) for text in rated),
            reported=grouping.last_report(conversation, turn.index),
        )
        previous = turn.index
        yield turn.index, FEEDBACK, gold
    for turn, reply, rating in rated_replies(conversation):
        gold = RatingGold(
            rating=rating,
            scale=bounds,
            position=turn.index / last,
            visible=len(history.history_through(conversation, turn.index)) + 1,
            reply_chars=len(reply.text),
            reported=grouping.last_report(conversation, turn.index + 1),
        )
        yield turn.index, REPLY_ITEM + reply.id, gold


def _shown(
    item: tasks.Item[RatingGold],
) -> tuple[tuple[history.Utterance, ...], int, tuple[PromptTemplate, PromptTemplate]]:
    """What the prompt shows, the turn before which self-reports were given, and the prompts
    that ask (a feedback item's, or a reply item's)."""
    conversation = item.conversation
    if not item.item_id.startswith(REPLY_ITEM):
        return (
            history.history_before(conversation, item.turn_index),
            item.turn_index,
            (PROMPT, CHOICE),
        )
    reply = history.turn_at(conversation, item.turn_index).response(item.item_id[len(REPLY_ITEM) :])
    if reply is None:
        raise ValueError(f"{item.key}: turn {item.turn_index} has no reply {item.item_id!r}")
    said = (
        *history.history_through(conversation, item.turn_index),
        history.Utterance("assistant", reply.text, item.turn_index),
    )
    return said, item.turn_index + 1, (REPLY, REPLY_CHOICE)


def usual_ratings(golds: Sequence[RatingGold], constant: bool) -> dict[tuple[float, ...], float]:
    """Per rating scale, the mean rating of these items (the constant's: the median)."""
    return grouping.usual_numbers(((tuple(g.scale), g.rating) for g in golds), constant)


@cache
def _rating(value: float) -> numeric.Numbers:
    """One (frozen) guess per value, shared by the items guessed it."""
    return numeric.Numbers(values={FIELD: value})


def rating_guess(usual: dict[tuple[float, ...], float], gold: RatingGold) -> tasks.Guess:
    """The usual rating on the item's scale (no guess where the train items had none)."""
    value = usual.get(tuple(gold.scale))
    if value is None:
        return None
    guess = _rating(value)
    return guess, numeric.scored({FIELD: gold.rating}, {FIELD: gold.scale}, guess)


RatingView = tasks.View[RatingGold, numeric.Numbers]


def _pair(view: RatingView, name: str) -> tuple[float | None, float | None]:
    guess = view.prediction.values.get(FIELD) if view.parsed and view.prediction else None
    return guess, view.gold.rating


def within_conversations(views: Sequence[RatingView]) -> FloatArray:
    """Per record (its conversation's rho / items, 1 / items), where three or more ratings
    were answered: a ratio of weighted sums then averages rho over conversations."""
    by_conversation: dict[str, list[int]] = defaultdict(list)
    for i, view in enumerate(views):
        by_conversation[view.record.conversation_id].append(i)
    out = np.zeros((len(views), 2))
    for rows in by_conversation.values():
        found = metrics.pairs([_pair(views[i], FIELD) for i in rows])
        usable = ~np.isnan(found).any(axis=1)
        if usable.sum() < 3:
            continue
        rho = float(metrics.spearman_statistic(found[usable], Weights.ones(int(usable.sum())))[0])
        if not np.isnan(rho):
            out[rows] = (rho / len(rows), 1.0 / len(rows))
    return out


def adjusted_values(views: Sequence[RatingView]) -> FloatArray:
    """The rows of `tasks.helpers.adjusted`: position cell, conversation, prediction, rating and
    corpus part."""
    spans = [v.gold.scale[1] - v.gold.scale[0] for v in views]
    return adjusted.adjusted_rows(
        [v.gold.cell for v in views],
        [v.record.conversation_id for v in views],
        [_pair(v, FIELD)[0] for v in views],
        [v.gold.rating for v in views],
        spans,
        [v.gold.part for v in views],
    )


class RatingScoring(grouping.GroupedScoring[RatingGold, numeric.Numbers]):
    headline = "position-adjusted correlation of predicted and given ratings"
    headline_metric = "position_adjusted_r"
    crowd = "reference/position-only"
    grouped = grouping.Grouped(usual_ratings, rating_guess)

    def choice_gold(self, item: tasks.Item[RatingGold], query: tasks.Query) -> str | None:
        rating = item.gold.rating
        return str(int(rating)) if float(rating).is_integer() else None

    @staticmethod
    def calibration_rows(view: RatingView) -> list[tuple[Mapping[str, float], str]]:
        return numeric.digit_rows(view.prediction, {FIELD: view.gold.rating})

    def answered_gold(self, gold: RatingGold, prediction: numeric.Numbers) -> RatingGold | None:
        given = prediction.values.get(FIELD)
        return None if given is None else gold.model_copy(update={"rating": given})

    metrics = metrics.register(
        TASK,
        *tasks.calibration_metrics(calibration_rows),
        metrics.Metric(
            "position_adjusted_r",
            headline + ", each residualised on the item's position cell within its corpus part "
            "(part x third of the conversation x messages shown); 0 for a constant, a "
            "position-only guess or a guess from the corpus part",
            adjusted_values,
            adjusted.adjusted_r_statistic,
        ),
        metrics.Metric(
            "pooled_position_adjusted_r",
            "the position-adjusted correlation with the corpus parts pooled (cells of position "
            "alone): a view, never the headline, which a rule that knows only each "
            "conversation's corpus can win; defined where the items come from several parts",
            adjusted_values,
            adjusted.across_parts(adjusted.adjusted_r_statistic),
        ),
        metrics.Metric(
            "between_person_r",
            "the position-adjusted correlation of the conversations' mean residuals",
            adjusted_values,
            adjusted.between_r_statistic,
        ),
        metrics.Metric(
            "within_person_r",
            "the position-adjusted correlation within conversations (less each one's mean)",
            adjusted_values,
            adjusted.within_r_statistic,
        ),
        metrics.Metric(
            "position_skill",
            "1 - squared error / squared error of the position reference (each position "
            "cell's mean rating): 0 for position alone, negative for a constant",
            adjusted_values,
            adjusted.position_skill_statistic,
        ),
        metrics.column_metric("score", "1 - absolute error as a share of the scale"),
        metrics.Metric(
            "within_conversation_spearman",
            "Spearman's rho within each conversation, averaged "
            "over conversations with three or more ratings",
            within_conversations,
            metrics.ratio_statistic,
        ),
        *numeric.field_metrics(FIELD, (1.0, 5.0), _pair),
    )


@tasks.register_task(TASK)
class RatingTask(tasks.Task[RatingGold, numeric.Numbers], scoring=RatingScoring):
    """Rating prediction at each point the person rated; `context` is blind, informed or both."""

    name = TASK
    gold_fields = ("rating",)
    subject_forms = (ANSWERS,)
    answer_modes = ("generate", "choice")
    templates = (PROMPT, CHOICE, REPLY, REPLY_CHOICE)

    def __init__(self, context: str = history.DEFAULT_CONTEXT, seed: int = 0) -> None:
        super().__init__(context)

    def gold_counts(self, conversations: Iterable[Conversation]) -> tasks.GoldCounts:
        """Where the person rated replies themselves (first-person): the rated replies, apart
        the feedback turns, and the rated replies that are items themselves."""
        counts: Counter[str] = Counter()
        for conversation in conversations:
            if conversation.source.provenance.get("rating") != "first-person":
                continue
            turns = conversation.turns
            rated = sum(1 for t in turns for r in t.responses if r.rating is not None)
            feedback = sum(1 for t in turns if t.feedback is not None)
            counts.update(
                responses=rated,
                feedback_turns=feedback,
                conversations=bool(rated or feedback),
                reply_items=len(rated_replies(conversation)),
            )
        names = ("responses", "feedback_turns", "conversations", "reply_items")
        return tasks.GoldCounts(
            {name: counts[name] for name in names},
            {
                TASK: (counts["responses"], ("rating",)),
                "feedback": (counts["feedback_turns"], ("rating",)),
            },
        )

    def items(self, conversations: Iterable[Conversation]) -> Iterator[tasks.Item[RatingGold]]:
        for conversation in conversations:
            for turn_index, item_id, gold in rating_golds(conversation):
                yield from tasks.in_contexts(self, conversation, turn_index, item_id, gold)

    def queries(self, item: tasks.Item[RatingGold], mode: tasks.AnswerMode) -> list[tasks.Query]:
        low, high = item.gold.scale
        said, seen, prompts = _shown(item)
        fields = prompting.shown_fields(item, said, seen)
        replies = [u.text for u in said if u.speaker == "assistant"]
        hint = TaskHint(
            text=replies[-1] if replies else "",
            labels=(f"{low:g}", f"{high:g}"),
            history=history.hint_history(said),
            form=ANSWERS,
        )
        generate, choice = prompts
        if mode == "generate":
            messages = generate.render(**fields, low=f"{low:g}", high=f"{high:g}")
            return [tasks.Query("answer", messages, generate.info, hint=hint)]
        base = choice.render(**fields)
        questions = {FIELD: choice.text("question", low=f"{low:g}", high=f"{high:g}")}
        return numeric.choice_queries(base, choice.info, hint, questions, {FIELD: item.gold.scale})

    def parse(
        self, item: tasks.Item[RatingGold], outputs: Mapping[str, tasks.Output]
    ) -> numeric.Numbers:
        return numeric.read_numbers(outputs, {FIELD: item.gold.scale})

    def score(self, item: tasks.Item[RatingGold], prediction: numeric.Numbers) -> tasks.Scored:
        return numeric.scored({FIELD: item.gold.rating}, {FIELD: item.gold.scale}, prediction)

    def worst(self, item: tasks.Item[RatingGold], partial: numeric.Numbers | None) -> tasks.Scored:
        return numeric.scored({FIELD: item.gold.rating}, {FIELD: item.gold.scale}, None)
