"""`outcome`: how the person felt and judged the conversation afterwards.

Construct: outcome prediction, the fourth capability of the seed system (with emotion
inference, response evaluation and preference anticipation): can a model tell, from a whole
conversation, how it left the person? The gold is what they reported after it:

- `final_intensity`: the intensity of their feeling afterwards (`outcome.final_state`, 1-5);
- `intensity_change`: that minus the intensity they reported before the conversation (the
  first turn's state); a model's change is its final intensity minus the same starting value;
- `rating`: their overall rating (`outcome.rating`, on the source's rating scale);
- every numeric answer of their end survey on a 1-5 scale (ESConv: `empathy`, `relevance`).

Items: one per conversation with any of these. The model reads the whole conversation (the
informed mode adds the states reported along the way). Per item the score is one minus the
mean absolute error as a share of each scale (see `tasks.numeric`); the metrics are MAE,
coverage and Spearman's rho per field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from attunebench.answerform import AnswerForm, dumps, registered, stated_scale, uniform
from attunebench.data.derived import CHANGE, FIVE, outcome_fields
from attunebench.data.schema import Conversation
from attunebench.data.taxonomy import taxonomy_of
from attunebench.models.hints import TaskHint
from attunebench.records import ItemRecord, PromptInfo
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
    Scored,
    Task,
    View,
    register_task,
)
from attunebench.tasks.calibration import calibration_metrics
from attunebench.tasks.prompting import JSON_PARAMS, self_reports_block, task_prompt, transcript

TASK = "outcome"
PROMPT = task_prompt(__name__, "outcome")
CHOICE = task_prompt(__name__, "outcome-choice")
KNOWN = ("final_intensity", CHANGE, "rating", "empathy", "relevance")
QUESTIONS = {
    "final_intensity": "How intense was the user's feeling after the conversation, from 1 "
    "(barely) to 5 (overwhelming)?",
    "rating": "How did the user rate the conversation overall, from {low:g} to {high:g}?",
}


# How the prompt names the fields asked: "Predict, on the scales given: name (...); ...".
_FIELDS = re.compile(r"Predict, on the scales given: (.*?)\. Answer with one JSON", re.S)
_FIELD = re.compile(r"(\w+) \(((?:[^()]|\([^()]*\))*)\)")


class OutcomeAnswers(AnswerForm):
    """`{"<field>": n, ...}`, from a hint carrying the fields asked as `labels` and each
    field's scale as `reference` {field: "low:high"}."""

    kind = TASK

    def example(self, hint: TaskHint) -> str:
        return dumps({name: 3 for name in hint.labels})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        drawn = {k: float(rng.integers(int(lo), int(hi) + 1)) for k, (lo, hi) in _scales(hint)}
        return dumps({name: round(value, 3) for name, value in drawn.items()})

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        values: dict[str, float] = gold.get("values", {})
        return dumps(
            {
                name: values[name] if right and name in values else uniform(rng, *scale)
                for name, scale in gold.get("scales", {}).items()
                if name in hint.labels
            }
        )

    def read_prompt(self, system: str, user: str) -> TaskHint | None:
        block = _FIELDS.search(user)
        if block is None:
            return None
        scales = {name: stated_scale(q) for name, q in _FIELD.findall(block.group(1))}
        reference = {k: f"{low:g}:{high:g}" for k, (low, high) in scales.items()}
        return TaskHint(kind=TASK, labels=tuple(scales), reference=reference, form=self)


def _scales(hint: TaskHint) -> list[tuple[str, tuple[float, float]]]:
    """Each field asked, with its scale ("low:high" in the hint's reference)."""
    scales = []
    for name in hint.labels:
        low, _, high = hint.reference.get(name, "1:5").partition(":")
        scales.append((name, (float(low), float(high))))
    return scales


ANSWERS = registered(OutcomeAnswers())


class OutcomeGold(Gold):
    level: GoldLevel = "conversation"
    values: dict[str, float]
    scales: dict[str, tuple[float, float]]
    initial_intensity: float | None = None


def outcome_gold(conversation: Conversation) -> OutcomeGold | None:
    values, scales, initial = outcome_fields(conversation)
    if not values:
        return None
    return OutcomeGold(values=values, scales=scales, initial_intensity=initial)


def asked(gold: OutcomeGold) -> dict[str, n.Scale]:
    """The fields a model answers: all but the change, which follows from the final value."""
    return {k: v for k, v in gold.scales.items() if k != CHANGE}


def question(name: str, scale: n.Scale) -> str:
    if name in QUESTIONS:
        return QUESTIONS[name].format(low=scale[0], high=scale[1])
    return f"How did the user answer '{name}' afterwards, from {scale[0]:g} to {scale[1]:g}?"


class OutcomeTask(Task[OutcomeGold, n.Numbers]):
    name = TASK
    gold_type = OutcomeGold
    prediction_type = n.Numbers
    headline = "1 - mean absolute error as a share of each scale"
    gold_fields = ("outcome", "state.intensity")
    subject_forms = (ANSWERS,)
    answer_modes = ("generate", "choice")

    def __init__(self, context: str = h.DEFAULT_CONTEXT) -> None:
        self.modes = h.context_modes(context)

    @property
    def prompts(self) -> list[PromptInfo]:
        return [PROMPT.info, CHOICE.info]

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item[OutcomeGold]]:
        for conversation in conversations:
            gold = outcome_gold(conversation)
            if gold is None:
                continue
            last = conversation.turns[-1].index
            for mode in self.modes:
                yield Item(
                    TASK, conversation, last, "outcome", taxonomy_of(conversation), gold, mode
                )

    def queries(self, item: Item[OutcomeGold], mode: AnswerMode) -> list[Query]:
        conversation = item.conversation
        said = h.history_before(conversation, item.turn_index + 1)  # all of it
        variant = item.context
        reports = h.self_reports_before(conversation, item.turn_index + 1)
        fields = {
            "conversation": transcript(said),
            "self_reports": self_reports_block(variant, reports, conversation),
        }
        scales = asked(item.gold)
        hint = TaskHint(
            kind="outcome",
            text=conversation.turns[-1].user,
            labels=tuple(scales),
            history=h.hint_history(said),
            reference={k: f"{low:g}:{high:g}" for k, (low, high) in scales.items()},
            form=ANSWERS,
        )
        if mode == "generate":
            wanted = "; ".join(f"{k} ({question(k, v)})" for k, v in scales.items())
            messages = PROMPT.render(**fields, fields=wanted)
            return [Query("answer", messages, PROMPT.info, JSON_PARAMS, hint)]
        base = CHOICE.render(**fields)
        forms = n.choice_forms(base, {k: question(k, v) for k, v in scales.items()}, scales)
        return [Query(k, base, CHOICE.info, JSON_PARAMS, hint, choice=f) for k, f in forms.items()]

    def parse(self, item: Item[OutcomeGold], outputs: Mapping[str, Output]) -> n.Numbers:
        return n.read_numbers(outputs, asked(item.gold))

    def _with_change(self, gold: OutcomeGold, prediction: n.Numbers | None) -> n.Numbers | None:
        if prediction is None or CHANGE not in gold.values:
            return prediction
        final = prediction.values.get("final_intensity")
        change = (
            None
            if final is None or gold.initial_intensity is None
            else (final - gold.initial_intensity)
        )
        return prediction.model_copy(update={"values": {**prediction.values, CHANGE: change}})

    def score(self, item: Item[OutcomeGold], prediction: n.Numbers) -> Scored:
        gold = item.gold
        return n.scored(gold.values, gold.scales, self._with_change(gold, prediction))

    def choice_gold(self, item: Item[OutcomeGold], query: Query) -> str | None:
        value = item.gold.values.get(query.key)
        return str(int(value)) if value is not None and float(value).is_integer() else None

    def calibration_rows(self, view: OutcomeView) -> list[tuple[Mapping[str, float], str]]:
        return _calibration_rows(view)

    def worst(self, item: Item[OutcomeGold], partial: n.Numbers | None) -> Scored:
        return n.scored(item.gold.values, item.gold.scales, None)

    def extra_metrics(self, records: Sequence[ItemRecord]) -> tuple[m.Metric, ...]:
        """MAE, coverage and Spearman of the survey answers beyond the known fields."""
        golds = [OutcomeGold.model_construct(**(r.gold or {})) for r in records]
        others = sorted({k for g in golds for k in g.values} - set(KNOWN))
        scales = {k: g.scales[k] for g in golds for k in g.scales}
        return tuple(metric for k in others for metric in n.field_metrics(k, scales[k], _pair))


OutcomeView = View[OutcomeGold, n.Numbers]


def _pair(view: OutcomeView, name: str) -> tuple[float | None, float | None]:
    truth = view.gold.values.get(name)
    guess = view.prediction
    if not view.parsed or guess is None:
        return None, truth
    if name == CHANGE:
        final, start = guess.values.get("final_intensity"), view.gold.initial_intensity
        return (None if final is None or start is None else final - start), truth
    return guess.values.get(name), truth


def _calibration_rows(view: OutcomeView) -> list[tuple[Mapping[str, float], str]]:
    return n.digit_rows(view.prediction, view.gold.values)


OutcomeTask.metrics = m.register(
    TASK,
    *calibration_metrics(_calibration_rows),
    m.column_metric("score", OutcomeTask.headline),
    *(
        metric
        for k in KNOWN
        for metric in n.field_metrics(k, (-4.0, 4.0) if k == CHANGE else FIVE, _pair)
    ),
)


@register_task(TASK)
def outcome_task(context: str = h.DEFAULT_CONTEXT, seed: int = 0) -> OutcomeTask:
    """Outcome prediction; `context` is blind (default), informed, or both."""
    return OutcomeTask(context)
