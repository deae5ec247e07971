"""`outcome`: how the person felt and judged the conversation afterwards.

The model predicts, from the whole conversation, each outcome field the person reported, on its
own scale (docs/tasks.md, "The tasks"). The change of intensity is not asked: ESConv kept only
conversations whose intensity fell, so a constant would score as well as a reading of the
person. The headline's cell also holds the fields an item asks (`field_set`): they are the ones
the person answered, so they are a cue (docs/tasks.md, "Headlines no trivial strategy can win").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from attunebench import answerform, tasks
from attunebench.answerform import TaskHint
from attunebench.data.derived import CHANGE, FIVE, outcome_fields
from attunebench.data.schema import Conversation
from attunebench.prompts import PromptTemplate
from attunebench.records import ItemRecord
from attunebench.stats import FloatArray
from attunebench.tasks.helpers import adjusted, grouping, history, metrics, numeric, prompting

TASK = "outcome"
PROMPT = tasks.task_prompt(__name__, "outcome")
CHOICE = tasks.task_prompt(__name__, "outcome-choice")
KNOWN = ("final_intensity", "rating", "empathy", "relevance")  # the headline's first fields
# Lower edges of the bins of messages shown: about the quintiles of ESConv's train split.
VISIBLE_EDGES = (20, 22, 25, 29, 35)
GENERIC = "other"  # the prompt's text asking for a field that has no question of its own
OWN_QUESTIONS = ("final_intensity", "rating")  # the fields the prompt file words a question for


def _fields_pattern(user: str) -> re.Pattern[str]:
    """Where the prompt names the fields asked, found from the prompt file's own words around
    `$fields`, so that editing them in the TOML cannot leave a second copy here behind."""
    line = next(line for line in user.splitlines() if "$fields" in line)
    before, after = line.split("$fields", 1)
    return re.compile(re.escape(before.strip()) + r"(.*?)" + re.escape(after[:20]), re.S)


_FIELDS = _fields_pattern(PROMPT.user)
_FIELD = re.compile(r"(\w+) \(((?:[^()]|\([^()]*\))*)\)")


class OutcomeAnswers(answerform.AnswerForm):
    """`{"<field>": n, ...}`, the fields asked in the hint's `labels`, each field's scale in its
    `reference` ("low:high"). A baseline reads every message the person wrote."""

    kind = TASK

    def example(self, hint: TaskHint) -> str:
        return answerform.dumps({name: 3 for name in hint.labels})

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        drawn = {k: float(rng.integers(int(lo), int(hi) + 1)) for k, (lo, hi) in _scales(hint)}
        return answerform.dumps({name: round(value, 3) for name, value in drawn.items()})

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        values: dict[str, float] = gold.get("values", {})
        return answerform.dumps(
            {
                name: values[name] if right and name in values else answerform.uniform(rng, *scale)
                for name, scale in gold.get("scales", {}).items()
                if name in hint.labels
            }
        )

    def question(self, hint: TaskHint) -> Hashable:
        return hint.labels, tuple(sorted(hint.reference.items()))

    def reads(self, hint: TaskHint) -> tuple[str, ...]:
        return ("\n".join(text for role, text in hint.history if role == "user"),)

    def schema(self, hint: TaskHint) -> answerform.Schema | None:
        """Each field asked, in its scale; null (not known), but not left out."""
        if not hint.labels:
            return None
        nullable = {
            k: {"anyOf": [answerform.in_scale(*scale), answerform.NULL]}
            for k, scale in _scales(hint)
        }
        return answerform.obj(nullable)

    def read_prompt(self, system: str, user: str) -> TaskHint | None:
        block = _FIELDS.search(user)
        if block is None:
            return None
        scales = {name: answerform.stated_scale(q) for name, q in _FIELD.findall(block.group(1))}
        reference = {k: f"{low:g}:{high:g}" for k, (low, high) in scales.items()}
        return TaskHint(labels=tuple(scales), reference=reference, form=self)


def _scales(hint: TaskHint) -> list[tuple[str, tuple[float, float]]]:
    """Each field asked, with its scale ("low:high" in the hint's reference)."""
    scales = []
    for name in hint.labels:
        low, _, high = hint.reference.get(name, "1:5").partition(":")
        scales.append((name, (float(low), float(high))))
    return scales


ANSWERS = answerform.registered(OutcomeAnswers())


class OutcomeGold(tasks.Gold):
    level: tasks.GoldLevel = "conversation"
    values: dict[str, float]
    scales: dict[str, tuple[float, float]]
    visible: int | None = None  # messages the prompt shows
    chars: int | None = None  # their characters
    reported: str | None = None  # the last self-report the informed prompt shows
    answer_fields = ("values", "scales")

    @property
    def shown_bin(self) -> int:
        return grouping.shown_bin(self.visible, VISIBLE_EDGES)

    def shown(self) -> grouping.Shown:
        return grouping.Shown(self.shown_bin, self.chars or 0, self.reported)


def outcome_gold(conversation: Conversation) -> OutcomeGold | None:
    found, scales, _ = outcome_fields(conversation)
    values = {k: v for k, v in found.items() if k != CHANGE}
    if not values:
        return None
    said = history.history_before(conversation, conversation.turns[-1].index + 1)
    return OutcomeGold(
        values=values,
        scales={k: scales[k] for k in values},
        visible=len(said),
        chars=sum(len(u.text) for u in said),
        reported=grouping.last_report(conversation, conversation.turns[-1].index + 1),
    )


def conversation_fields(template: PromptTemplate, item: tasks.Item[OutcomeGold]) -> dict[str, str]:
    """The prompt's conversation, self-reports and other side, in the words for who the other
    side was (`context.labels.partner`: a person is never called an assistant)."""
    end = item.turn_index + 1
    said = history.history_before(item.conversation, end)  # all of it
    side = "person" if item.conversation.context.labels.get("partner") == "person" else "model"
    speaker = template.text("speaker_person") if side == "person" else None
    shown = prompting.shown_fields(item, said, end, assistant=speaker)
    return {**shown, "other_side": template.text(f"other_{side}")}


def question(template: PromptTemplate, name: str, scale: numeric.Scale) -> str:
    """A field's question in the prompt's wording: its own text, or the one for any field."""
    asked = name if name in OWN_QUESTIONS else GENERIC
    return template.text(asked, name=name, low=f"{scale[0]:g}", high=f"{scale[1]:g}")


Usual = dict[tuple[str, tuple[float, ...]], float]


def usual_values(golds: Sequence[OutcomeGold], constant: bool) -> Usual:
    """Per field and scale, its mean over these items (the constant's: its median)."""
    found = (
        ((name, tuple(gold.scales[name])), value)
        for gold in golds
        for name, value in gold.values.items()
    )
    return grouping.usual_numbers(found, constant)


def values_guess(usual: Usual, gold: OutcomeGold) -> tasks.Guess:
    """Each field the usual value on its scale; one the train items lacked is left unanswered."""
    known = ((name, usual.get((name, tuple(gold.scales[name])))) for name in gold.values)
    values = {name: value for name, value in known if value is not None}
    if not values:
        return None
    guess = numeric.Numbers(values=values)
    return guess, numeric.scored(gold.values, gold.scales, guess)


OutcomeView = tasks.View[OutcomeGold, numeric.Numbers]


def _pair(view: OutcomeView, name: str) -> tuple[float | None, float | None]:
    truth = view.gold.values.get(name)
    guess = view.prediction
    if not view.parsed or guess is None:
        return None, truth
    return guess.values.get(name), truth


def headline_fields(views: Sequence[OutcomeView]) -> list[str]:
    """The fields the headline averages over: the known ones, then the others in name order."""
    found = {name for view in views for name in view.gold.values}
    return [name for name in KNOWN if name in found] + sorted(found - set(KNOWN))


def headline_values(views: Sequence[OutcomeView]) -> FloatArray:
    """(predicted, given) per headline field, NaN where the gold lacks it; a field left
    unanswered is guessed as its scale's midpoint (never left out)."""
    rows = []
    fields = headline_fields(views)
    for view in views:
        row: list[float | None] = []
        for name in fields:
            guess, truth = _pair(view, name)
            if truth is not None and guess is None:
                low, high = view.gold.scales[name]
                guess = (low + high) / 2
            row += [guess, truth] if truth is not None else [None, None]
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(len(views), 2 * len(fields))


def adjusted_values(views: Sequence[OutcomeView]) -> FloatArray:
    """Per headline field, the rows of `tasks.helpers.adjusted` (NaN where the gold lacks it)."""
    blocks = []
    conversations = [v.record.conversation_id for v in views]
    fields = headline_fields(views)
    parts = [v.gold.part for v in views]
    asked_sets = [field_set(v.gold) for v in views]
    for name in fields:
        truths = [v.gold.values.get(name) for v in views]
        # a field's cells keep its scales apart (a rating out of 1 and one out of 5)
        cells = [(tuple(v.gold.scales.get(name, ())), v.gold.shown_bin) for v in views]
        found = adjusted.adjusted_rows(
            cells,
            conversations,
            [_pair(v, name)[0] for v in views],
            [np.nan if truth is None else truth for truth in truths],
            [high - low for low, high in (v.gold.scales.get(name, FIVE) for v in views)],
            parts,
            asked_sets,
        )
        blocks.append(found)
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((len(views), 0))


def field_set(gold: OutcomeGold) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """The fields an item asks, each with its scale: what the prompt shows of the gold, and so
    part of each field's cell (see the module docstring)."""
    return tuple(sorted((name, tuple(scale)) for name, scale in gold.scales.items()))


class OutcomeScoring(grouping.GroupedScoring[OutcomeGold, numeric.Numbers]):
    headline = (
        "mean position-adjusted correlation over the outcome fields (final intensity, rating, "
        "each survey answer)"
    )
    headline_metric = "mean_adjusted_r"
    crowd = "reference/position-only"
    grouped = grouping.Grouped(usual_values, values_guess)

    def choice_gold(self, item: tasks.Item[OutcomeGold], query: tasks.Query) -> str | None:
        value = item.gold.values.get(query.key)
        return str(int(value)) if value is not None and float(value).is_integer() else None

    @staticmethod
    def calibration_rows(view: OutcomeView) -> list[tuple[Mapping[str, float], str]]:
        return numeric.digit_rows(view.prediction, view.gold.values)

    def answered_gold(self, gold: OutcomeGold, prediction: numeric.Numbers) -> OutcomeGold | None:
        """The fields the person reported that the answer gives."""
        given = prediction.values
        values = {k: v for k, v in given.items() if k in gold.values and v is not None}
        return gold.model_copy(update={"values": values}) if values else None

    def extra_metrics(self, records: Sequence[ItemRecord]) -> tuple[metrics.Metric, ...]:
        """MAE, coverage and Spearman of the survey answers beyond the known fields."""
        golds = [OutcomeGold.model_construct(**(r.gold or {})) for r in records]
        others = sorted({k for g in golds for k in g.values} - set(KNOWN))
        scales = {k: g.scales[k] for g in golds for k in g.scales}
        return tuple(
            metric for k in others for metric in numeric.field_metrics(k, scales[k], _pair)
        )

    metrics = metrics.register(
        TASK,
        *tasks.calibration_metrics(calibration_rows),
        metrics.Metric(
            "mean_adjusted_r",
            headline + ", those the gold has, each residualised on its cell: the corpus part "
            "x the fields asked x the bin of messages shown; 0 for a constant, a guess from "
            "the number of messages, the corpus part or the fields asked",
            adjusted_values,
            adjusted.mean_adjusted_r_statistic,
        ),
        metrics.Metric(
            "pooled_mean_adjusted_r",
            "the mean position-adjusted correlation with the corpus parts and the fields asked "
            "pooled (cells of the bin of messages shown alone): a view, never the headline, "
            "which a rule that knows the corpus or the fields asked can win; defined where the "
            "items come from several parts",
            adjusted_values,
            adjusted.across_parts(adjusted.mean_adjusted_r_statistic),
        ),
        metrics.Metric(
            "mean_spearman",
            "mean Spearman's rho over the outcome fields the gold has (final intensity, rating, "
            "each survey answer; a constant scores 0)",
            headline_values,
            adjusted.mean_rho_statistic,
        ),
        metrics.column_metric("score", "1 - mean absolute error as a share of each scale"),
        *(metric for k in KNOWN for metric in numeric.field_metrics(k, FIVE, _pair)),
    )


@tasks.register_task(TASK)
class OutcomeTask(tasks.Task[OutcomeGold, numeric.Numbers], scoring=OutcomeScoring):
    """Outcome prediction; `context` is blind (default), informed, or both."""

    name = TASK
    gold_fields = ("outcome", "state.intensity")
    subject_forms = (ANSWERS,)
    answer_modes = ("generate", "choice")
    templates = (PROMPT, CHOICE)

    def __init__(self, context: str = history.DEFAULT_CONTEXT, seed: int = 0) -> None:
        super().__init__(context)

    def gold_counts(self, conversations: Iterable[Conversation]) -> tasks.GoldCounts:
        """Conversations with an outcome: a final intensity (and its change), a rating, or
        numeric end-survey answers."""
        counts: Counter[str] = Counter()
        survey: Counter[str] = Counter()
        for conversation in conversations:
            if (outcome := conversation.outcome) is None:
                continue
            final = outcome.final_state.intensity if outcome.final_state else None
            numeric = [k for k, v in outcome.survey.items() if not isinstance(v, str)]
            survey.update(numeric)
            states = (t.state for t in conversation.turns if t.state is not None)
            started = any(state.intensity is not None for state in states)
            counts.update(
                conversations=final is not None or outcome.rating is not None or bool(numeric),
                with_final_intensity=final is not None,
                with_intensity_change=final is not None and started,
                with_rating=outcome.rating is not None,
            )
        names = ("conversations", "with_final_intensity", "with_intensity_change", "with_rating")
        return tasks.GoldCounts(
            {**{name: counts[name] for name in names}, "survey_ratings": survey},
            {TASK: (counts["conversations"], ("outcome",))},
        )

    def items(self, conversations: Iterable[Conversation]) -> Iterator[tasks.Item[OutcomeGold]]:
        for conversation in conversations:
            gold = outcome_gold(conversation)
            if gold is None:
                continue
            last = conversation.turns[-1].index
            yield from tasks.in_contexts(self, conversation, last, "outcome", gold)

    def queries(self, item: tasks.Item[OutcomeGold], mode: tasks.AnswerMode) -> list[tasks.Query]:
        conversation = item.conversation
        said = history.history_before(conversation, item.turn_index + 1)  # all of it
        scales = item.gold.scales
        hint = TaskHint(
            text=conversation.turns[-1].user,
            labels=tuple(scales),
            history=history.hint_history(said),
            reference={k: f"{low:g}:{high:g}" for k, (low, high) in scales.items()},
            form=ANSWERS,
        )
        if mode == "generate":
            wanted = "; ".join(f"{k} ({question(PROMPT, k, v)})" for k, v in scales.items())
            messages = PROMPT.render(**conversation_fields(PROMPT, item), fields=wanted)
            return [tasks.Query("answer", messages, PROMPT.info, hint=hint)]
        base = CHOICE.render(**conversation_fields(CHOICE, item))
        questions = {k: question(CHOICE, k, v) for k, v in scales.items()}
        return numeric.choice_queries(base, CHOICE.info, hint, questions, scales)

    def parse(
        self, item: tasks.Item[OutcomeGold], outputs: Mapping[str, tasks.Output]
    ) -> numeric.Numbers:
        return numeric.read_numbers(outputs, item.gold.scales)

    def score(self, item: tasks.Item[OutcomeGold], prediction: numeric.Numbers) -> tasks.Scored:
        return numeric.scored(item.gold.values, item.gold.scales, prediction)

    def worst(self, item: tasks.Item[OutcomeGold], partial: numeric.Numbers | None) -> tasks.Scored:
        return numeric.scored(item.gold.values, item.gold.scales, None)
