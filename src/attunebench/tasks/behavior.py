"""`behavior`: say what an assistant reply did, against the labels given to that reply.

ESConv's support-strategy labels (the supporter's own tags) extended with the behaviors people
complain about in assistants (lecturing, dismissing, deflecting, over-apologising). An item is
every reply with behavior labels; the model lists every label the reply shows. `score` is the
F1 of the label sets (two empty sets agree, 1.0); the headline is macro-F1 over labels, which
naming the most frequent label everywhere scores low on. In choice mode each label is a yes/no
question, predicted where "yes" has probability of at least `THRESHOLD`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from operator import attrgetter
from typing import Any

import numpy as np
from pydantic import Field

from attunebench import answerform, tasks
from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation
from attunebench.frozen import Frozen
from attunebench.prompts import delimit
from attunebench.tasks.helpers import grouping, history, metrics, prompting

TASK = "behavior"
PROMPT = tasks.task_prompt(__name__, "behavior")
CHOICE_PROMPT = tasks.task_prompt(__name__, "behavior-choice")
THRESHOLD = 0.5  # a label is predicted in choice mode when P(yes) >= THRESHOLD
YES_NO = [(option, CHOICE_PROMPT.text(option)) for option in ("yes", "no")]
YES = prompting.option_keys(YES_NO)["yes"]  # the key of "yes" in a label's choice question


class BehaviorGold(tasks.Gold):
    level: tasks.GoldLevel = "reply"
    behaviors: tuple[str, ...]
    visible: int | None = None  # messages the prompt shows before the reply
    chars: int | None = None  # the reply's characters
    reported: str | None = None  # the last self-report the informed prompt shows
    answer_fields = ("behaviors",)

    def shown(self) -> grouping.Shown:
        return grouping.shown_of(self.visible, self.chars or 0, self.reported)


class BehaviorPrediction(Frozen):
    behaviors: tuple[str, ...] = ()
    # choice mode: each label's probability of "yes"
    yes_probabilities: dict[str, float] = Field(default_factory=dict)


class BehaviorAnswers(answerform.AnswerForm):
    """`{"behaviors": [L, ...]}`, from a hint carrying the reply as `text` and the labels."""

    kind = TASK
    marker = '{"behaviors"'

    def example(self, hint: TaskHint) -> str:
        return answerform.dumps({"behaviors": list(hint.labels[:1])})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        return answerform.dumps({"behaviors": [answerform.pick(rng, answerform.labels_of(hint))]})

    def labelled(
        self, hint: TaskHint, labels: Sequence[str], sentiment: float | None = None
    ) -> dict[str, Any]:
        return {"behaviors": list(labels)}

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        truth = list(gold.get("behaviors", []))
        wrong = [label for label in hint.labels if label not in truth] or list(hint.labels)
        return answerform.dumps({"behaviors": truth if right else [answerform.pick(rng, wrong)]})

    def schema(self, hint: TaskHint) -> answerform.Schema | None:
        return (
            answerform.obj({"behaviors": answerform.some_of(hint.labels)}) if hint.labels else None
        )


ANSWERS = answerform.registered(BehaviorAnswers())


def f1(predicted: Iterable[str], gold: Iterable[str]) -> float:
    """F1 of two label sets; two empty sets agree perfectly (1.0).

    >>> f1(["a", "b"], ["b", "c"])
    0.5
    """
    p, g = set(predicted), set(gold)
    if not p and not g:
        return 1.0
    return 2 * len(p & g) / (len(p) + len(g))


BehaviorView = tasks.View[BehaviorGold, BehaviorPrediction]


_BEHAVIORS = attrgetter("behaviors")


def usual_behavior(golds: Sequence[BehaviorGold], constant: bool) -> tuple[str, ...] | None:
    """The one label most frequent among these items (the constant's: the majority label);
    none where they carry none, and nothing learned from no items."""
    if not golds:
        return None
    label = grouping.most_common(map(_BEHAVIORS, golds))  # no Python statement per item
    return (label,) if label else ()


_behavior_guess = cache(BehaviorPrediction)  # one (frozen) guess per label, shared by its items


def behavior_guess(labels: tuple[str, ...] | None, gold: BehaviorGold) -> tasks.Guess:
    if labels is None:
        return None
    return _scored_guess(labels, tuple(gold.behaviors))


@cache  # few label tuples guessed and held: each guess's score made once and shared (frozen)
def _scored_guess(labels: tuple[str, ...], behaviors: tuple[str, ...]) -> tasks.Guess:
    guess = _behavior_guess(behaviors=labels)
    return guess, tasks.Scored(f1(guess.behaviors, behaviors))


class BehaviorScoring(grouping.GroupedScoring[BehaviorGold, BehaviorPrediction]):
    headline = "macro-F1: the mean of per-label F1 within each corpus part"
    headline_metric = "macro_f1"
    grouped = grouping.Grouped(usual_behavior, behavior_guess)

    def choice_gold(self, item: tasks.Item[BehaviorGold], query: tasks.Query) -> str | None:
        return "yes" if query.key.removeprefix("label:") in item.gold.behaviors else "no"

    @staticmethod
    def label_sets(view: BehaviorView) -> tuple[frozenset[str], frozenset[str]]:
        guess = view.prediction.behaviors if view.parsed and view.prediction else ()
        # tuple(): a gold or answer of an older record, constructed unvalidated, holds lists
        return metrics.label_pair(tuple(guess), tuple(view.gold.behaviors))

    @staticmethod
    def calibration_rows(view: BehaviorView) -> list[tuple[Mapping[str, float], str]]:
        """One yes/no row per label asked."""
        guess = view.prediction
        if guess is None:
            return []
        truth = set(view.gold.behaviors)
        return [
            ({"yes": p, "no": 1.0 - p}, "yes" if label in truth else "no")
            for label, p in guess.yes_probabilities.items()
        ]

    metrics = metrics.register(
        TASK,
        metrics.column_metric("score", "per-item F1"),
        metrics.f1_metric(
            "micro_f1",
            "micro-F1 over labels, pooled over items",
            label_sets,
            metrics.micro_f1_statistic,
        ),
        metrics.f1_metric("macro_f1", headline, label_sets, metrics.macro_f1_statistic),
        metrics.pooled_macro_f1(label_sets),
        *tasks.calibration_metrics(calibration_rows, positive="yes"),
    )


@tasks.register_task(TASK)
class BehaviorTask(tasks.Task[BehaviorGold, BehaviorPrediction], scoring=BehaviorScoring):
    """Reply-behavior labelling; `context` is blind (default), informed, or both;
    `max_replies` bounds the labelled replies taken per conversation (the first ones), where
    asking one question per label and reply (choice mode) would cost too much."""

    name = TASK
    gold_fields = ("behaviors",)
    subject_forms = (ANSWERS,)
    answer_modes = ("generate", "choice")
    templates = (PROMPT, CHOICE_PROMPT)

    def __init__(
        self, context: str = history.DEFAULT_CONTEXT, max_replies: int | None = None, seed: int = 0
    ) -> None:
        if max_replies is not None and max_replies < 1:
            raise ValueError(f"max_replies must be >= 1 (got {max_replies})")
        super().__init__(context)
        self.max_replies = max_replies

    def gold_counts(self, conversations: Iterable[Conversation]) -> tasks.GoldCounts:
        """Replies with at least one behavior label. The gold's kind counts the items, one per
        labelled reply at the defaults `data stats` builds the task with (blind, no cap)."""
        turns = [turn for c in conversations for turn in c.turns]
        labelled = sum(1 for turn in turns for reply in turn.responses if reply.behaviors)
        return tasks.GoldCounts({"responses_with_behaviors": labelled})

    def items(self, conversations: Iterable[Conversation]) -> Iterator[tasks.Item[BehaviorGold]]:
        for conversation in conversations:
            labelled = [
                (turn, r) for turn in conversation.turns for r in turn.responses if r.behaviors
            ]
            for turn, reply in labelled[: self.max_replies]:
                gold = BehaviorGold(
                    behaviors=reply.behaviors,
                    visible=len(history.history_through(conversation, turn.index)),
                    chars=len(reply.text),
                    reported=grouping.last_report(conversation, turn.index),
                )
                yield from tasks.in_contexts(self, conversation, turn.index, reply.id, gold)

    def queries(self, item: tasks.Item[BehaviorGold], mode: tasks.AnswerMode) -> list[tasks.Query]:
        conversation, labels = item.conversation, item.taxonomy.behaviors
        turn = history.turn_at(conversation, item.turn_index)
        reply = turn.response(item.item_id)
        if reply is None:
            raise ValueError(f"{item.key}: turn {turn.index} has no reply {item.item_id!r}")
        said = history.history_through(conversation, turn.index)
        shown = prompting.shown_fields(item, said, turn.index)
        fields = {**shown, "reply": delimit("reply", reply.text)}
        hint = TaskHint(
            text=reply.text,
            labels=tuple(label.name for label in labels),
            history=history.hint_history(said),
            form=ANSWERS,
        )
        if mode == "generate":
            messages = PROMPT.render(**fields, labels=prompting.label_menu(labels))
            return [tasks.Query("answer", messages, PROMPT.info, hint=hint)]
        base = CHOICE_PROMPT.render(**fields)
        return [
            prompting.choice_query(
                f"label:{label.name}",
                base,
                CHOICE_PROMPT.info,
                hint,
                CHOICE_PROMPT.text("question", name=label.name, description=label.description),
                YES_NO,
            )
            for label in labels
        ]

    def parse(
        self, item: tasks.Item[BehaviorGold], outputs: Mapping[str, tasks.Output]
    ) -> BehaviorPrediction:
        if "answer" in outputs:
            found = tasks.answer_fields(outputs["answer"].text or "")
            if "behaviors" not in found:
                raise tasks.InvalidAnswer("the answer has no 'behaviors' list")
            labels = item.taxonomy.behaviors
            return BehaviorPrediction(
                behaviors=tasks.label_list(found["behaviors"], labels, "behavior")
            )
        yes: dict[str, float] = {}
        for key, output in outputs.items():
            spread = output.probabilities or {}
            total = sum(spread.values())
            yes[key.removeprefix("label:")] = spread.get(YES, 0.0) / total if total else 0.0
        chosen = tuple(label for label, p in yes.items() if p >= THRESHOLD)
        return BehaviorPrediction(behaviors=chosen, yes_probabilities=yes)

    def score(self, item: tasks.Item[BehaviorGold], prediction: BehaviorPrediction) -> tasks.Scored:
        return tasks.Scored(f1(prediction.behaviors, item.gold.behaviors))
