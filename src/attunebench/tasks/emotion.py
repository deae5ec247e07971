"""`emotion`: how the user felt, against what was reported about that moment.

The model names a primary label and every label that applies, and rates the numbers reported
(intensity, valence, arousal, PANAS items; docs/tasks.md, "The tasks"). The headline is the
primary label's macro-F1, which naming the most frequent label scores low on. A number left
out, or an invalid answer, scores the largest error on its scale, so abstaining never lowers an
error. In choice mode valence and arousal are not asked.
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
from attunebench.data import derived
from attunebench.data.schema import Conversation, State, Turn
from attunebench.frozen import Frozen
from attunebench.prompts import PromptTemplate
from attunebench.stats import FloatArray, IntArray, Weights
from attunebench.tasks.helpers import grouping, history, metrics, parsing, prompting

TASK = "emotion"
PROMPT = tasks.task_prompt(__name__, "emotion")
CHOICE_PROMPT = tasks.task_prompt(__name__, "emotion-choice")
SCALES = {"intensity": (1.0, 5.0), "valence": (-1.0, 1.0), "arousal": (0.0, 1.0)}
PANAS = (1.0, 5.0)
INTENSITY_KEYS = ("1", "2", "3", "4", "5")


class EmotionReading(Frozen):
    """The labels and numbers a gold reports and an answer names alike."""

    primary: str | None = None
    emotions: tuple[str, ...] = ()
    intensity: float | None = None
    valence: float | None = None
    arousal: float | None = None

    def number(self, name: str) -> float | None:
        value: float | None = getattr(self, name)
        return value


# The reading first, so the gold's fields keep their order (Gold's level and derived first).
class EmotionGold(EmotionReading, tasks.Gold):
    panas: dict[str, float] = Field(default_factory=dict)
    visible: int | None = None  # messages the prompt shows
    chars: int | None = None  # characters of the user's words the item is about
    reported: str | None = None  # the last self-report the informed prompt shows
    answer_fields = ("primary", "emotions", "intensity", "valence", "arousal", "panas")

    def shown(self) -> grouping.Shown:
        return grouping.shown_of(self.visible, self.chars or 0, self.reported)

    @property
    def labels(self) -> frozenset[str]:
        # tuple(): a gold of an older record, constructed unvalidated, may hold a list
        return _labels(tuple(self.emotions), self.primary)


@cache  # golds share a few label tuples: each set is made once
def _labels(emotions: tuple[str, ...], primary: str | None) -> frozenset[str]:
    return frozenset((*emotions, *([primary] if primary else [])))


class EmotionPrediction(EmotionReading):
    panas: dict[str, float | None] = Field(default_factory=dict)
    asked: tuple[str, ...] = ()  # the numbers the question asked for
    # choice mode: each label's probability
    label_probabilities: dict[str, float] = Field(default_factory=dict)


class EmotionAnswers(answerform.AnswerForm):
    """`{"primary": L, "emotions": [L, ...], "intensity": n, "valence": x, "arousal": x}`, from
    a hint carrying the user's message as `text` and the taxonomy's labels."""

    kind = TASK
    marker = '{"primary"'

    def example(self, hint: TaskHint) -> str:
        first = list(hint.labels[:1])
        middle = {"intensity": 3, "valence": 0.0, "arousal": 0.5}
        return answerform.dumps(
            {"primary": first[0] if first else None, "emotions": first, **middle}
        )

    def random(self, hint: TaskHint, rng: np.random.Generator) -> str:
        primary = answerform.pick(rng, answerform.labels_of(hint))
        numbers = [float(rng.integers(1, 6)), rng.uniform(-1.0, 1.0), rng.uniform(0.0, 1.0)]
        named = dict(zip(SCALES, (round(float(x), 3) for x in numbers), strict=True))
        return answerform.dumps({"primary": primary, "emotions": [primary], **named})

    def labelled(
        self, hint: TaskHint, labels: Sequence[str], sentiment: float | None = None
    ) -> dict[str, Any] | None:
        """The first label as the primary (no answer names none); a sentiment is the valence,
        and its strength the intensity (1 + 4 x |sentiment|)."""
        if not labels:
            return None
        gold: dict[str, Any] = {"primary": labels[0], "emotions": list(labels)}
        if sentiment is not None:
            gold |= {"valence": sentiment, "intensity": 1 + 4 * abs(sentiment)}
        return gold

    def from_gold(
        self, hint: TaskHint, gold: Mapping[str, Any], right: bool, rng: np.random.Generator
    ) -> str:
        labels = list(hint.labels)
        truth = gold.get("primary") or next(iter(gold.get("emotions") or []), None)
        others = [label for label in labels if label != truth] or labels
        primary = truth if right and truth else answerform.pick(rng, others)
        answer: dict[str, Any] = {"primary": primary, "emotions": [primary]}
        for name, (low, high) in SCALES.items():
            if gold.get(name) is not None:
                answer[name] = gold[name] if right else answerform.uniform(rng, low, high)
        return answerform.dumps(answer)

    def schema(self, hint: TaskHint) -> answerform.Schema | None:
        """The labels from the hint's taxonomy; the numbers, which a question may not ask,
        each in its scale and optional, as PANAS items (named in the prompt only)."""
        if not hint.labels:
            return None
        numbers = {name: answerform.in_scale(low, high) for name, (low, high) in SCALES.items()}
        panas = {"type": "object", "additionalProperties": answerform.in_scale(*PANAS)}
        labels = {
            "primary": answerform.one_of(hint.labels),
            "emotions": answerform.some_of(hint.labels),
        }
        return answerform.obj({**labels, **numbers, "panas": panas}, optional=(*SCALES, "panas"))


ANSWERS = answerform.registered(EmotionAnswers())


def reading(state: State) -> dict[str, Any]:
    """What a state reports, as the fields of a gold or of an answer: the primary label is the
    one emotion reported where none is named primary."""
    primary = state.primary or (state.emotions[0] if len(state.emotions) == 1 else None)
    numbers = {name: getattr(state, name) for name in SCALES}
    panas = {k: float(v) for k, v in (state.panas or {}).items()}
    return {"primary": primary, "emotions": state.emotions, **numbers, "panas": panas}


def turn_gold(turn: Turn) -> EmotionGold | None:
    """A turn's own gold, or None when its state carries none."""
    if turn.state is None:
        return None
    gold = EmotionGold(**reading(turn.state))
    has_numbers = any(gold.number(n) is not None for n in SCALES) or gold.panas
    return gold if gold.labels or has_numbers else None


def again(state: State, gold: EmotionGold) -> EmotionPrediction:
    """A repeat answer to a turn's emotion check, as an answer to its item."""
    found = reading(state)
    asked = tuple(n for n in SCALES if gold.number(n) is not None and found[n] is not None)
    return EmotionPrediction(**found, asked=asked)


def conversation_gold(conversation: Conversation) -> EmotionGold:
    """The conversation's label, with the numbers reported before it began (its first turn)."""
    first = conversation.turns[0].state
    label = conversation.context.emotion
    numbers = {name: getattr(first, name) if first else None for name in SCALES}
    emotions = (label,) if label else ()
    return EmotionGold(level="conversation", primary=label, emotions=emotions, **numbers)


# An invalid answer's: every number asked, none given, no label named.
NOTHING = EmotionPrediction(asked=tuple(SCALES))


def score_numbers(gold: EmotionGold, prediction: EmotionPrediction) -> dict[str, float]:
    """Absolute errors of the numbers asked (missing: the scale's largest error)."""
    out: dict[str, float] = {}
    for name, (low, high) in SCALES.items():
        # what was asked first: a reference's label guess asks none (three reads saved a guess)
        if name not in prediction.asked or (truth := gold.number(name)) is None:
            continue
        guess = prediction.number(name)
        out[f"{name}_abs_error"] = high - low if guess is None else abs(guess - truth)
    if gold.panas:
        answers = prediction.panas
        errors = [
            PANAS[1] - PANAS[0] if answers.get(k) is None else abs(float(answers[k] or 0) - v)
            for k, v in gold.panas.items()
        ]
        out["panas_abs_error"] = float(np.mean(errors))
    return out


def score_prediction(gold: EmotionGold, prediction: EmotionPrediction) -> tasks.Scored:
    values: dict[str, float | None] = dict(score_numbers(gold, prediction))
    correct: float | None = None
    labels = gold.labels  # a property that builds the set: read once
    if labels:
        hit = prediction.primary == gold.primary if gold.primary else prediction.primary in labels
        correct = float(hit)
        predicted = set(prediction.emotions)
        values["jaccard"] = len(predicted & labels) / len(predicted | labels)
    return tasks.Scored(correct, {"primary_correct": correct, **values})


def shown(conversation: Conversation, turn_index: int, gold: EmotionGold) -> EmotionGold:
    """The gold with what its prompt shows (messages, the user's words, last self-report)."""
    said = history.history_through(conversation, turn_index)
    words = [u.text for u in said if u.speaker == "user"]
    about = words if gold.level == "conversation" else words[-1:]
    return gold.model_copy(
        update={
            "visible": len(said),
            "chars": sum(map(len, about)),
            "reported": grouping.last_report(conversation, turn_index),
        }
    )


_PRIMARY = attrgetter("primary")


def usual_label(golds: Sequence[EmotionGold], constant: bool) -> str | None:
    """The primary label most frequent among these items."""
    # one list, not one per item, read with no Python statement per item
    return grouping.most_common([list(filter(None, map(_PRIMARY, golds)))])


_label_guess = cache(EmotionPrediction)  # one (frozen) guess per label, shared by its items
_label_scored: dict[tuple[str, str | None, frozenset[str], bool], tasks.Guess] = {}


def label_guess(label: str | None, gold: EmotionGold) -> tasks.Guess:
    """A labelled item guessed as `label`."""
    labels = gold.labels
    if label is None or not labels:
        return None
    # A label guess gives no number: its score reads only the gold's labels and whether it
    # reports PANAS items (each then missed by the whole scale), so it is made once per those.
    key = (label, gold.primary, labels, bool(gold.panas))
    found = _label_scored.get(key)
    if found is None:
        guess = _label_guess(primary=label, emotions=(label,))
        found = _label_scored[key] = (guess, score_prediction(gold, guess))
    return found


EmotionView = tasks.View[EmotionGold, EmotionPrediction]


_NO_LABELS: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())


def _primary_sets(view: EmotionView) -> tuple[frozenset[str], frozenset[str]]:
    primary = view.gold.primary
    if primary is None:
        return _NO_LABELS
    prediction = view.prediction
    return _primary_pair(prediction.primary if view.parsed and prediction else None, primary)


@cache  # read per record by the metrics and the diagnostics: keyed by two strings, no tuple
def _primary_pair(guess: str | None, primary: str) -> tuple[frozenset[str], frozenset[str]]:
    return metrics.label_pair((guess,) if guess else (), (primary,))


def _label_sets(view: EmotionView) -> tuple[frozenset[str], frozenset[str]]:
    labels = view.gold.labels
    if not labels:  # only numbers were reported: no label can be right or wrong
        return _NO_LABELS
    guess = view.prediction.emotions if view.parsed and view.prediction else ()
    return metrics.label_pair(tuple(guess), labels)


ASKED = {name: f"{name}_abs_error" for name in SCALES}  # a score the item has when asked
# A prediction's or a gold's numbers in SCALES' order, read in one call (metrics read them for
# every record).
_SCALE_NUMBERS = attrgetter(*SCALES)


def _given_numbers(view: EmotionView) -> tuple[float | None, ...]:
    """The numbers an answer gives, in SCALES' order (None for each where none parsed)."""
    guess = view.prediction if view.parsed else None
    return (None,) * len(SCALES) if guess is None else _SCALE_NUMBERS(guess)


def _number_rows(views: Sequence[EmotionView]) -> FloatArray:
    """Per record and number (SCALES' order): predicted, reported, and whether answered (NaN
    where not asked). Read a column at a time (a Python row per record cost twice as much),
    and what an answer gives once per distinct answer (`metrics.distinct_answers`)."""
    answers, answer = metrics.distinct_answers(views)
    given = list(map(_given_numbers, answers))
    truths = list(map(_SCALE_NUMBERS, map(attrgetter("gold"), views)))
    scores = list(map(attrgetter("scores"), views))
    width = len(SCALES)
    out = np.empty((len(views), 3 * width))
    out[:, 0::3] = np.array(given, dtype=np.float64).reshape(len(given), width)[answer]
    out[:, 1::3] = np.array(truths, dtype=np.float64).reshape(len(views), width)
    answered = [[number is not None for number in numbers] for numbers in given]
    by_answer = np.array(answered, dtype=np.float64).reshape(len(given), width)[answer]
    for n, key in enumerate(ASKED.values()):
        asked = [found.get(key) is not None for found in scores]
        out[:, 3 * n + 2] = np.where(asked, by_answer[:, n], np.nan)
    return out


def _panas_rows(views: Sequence[EmotionView]) -> tuple[FloatArray, IntArray]:
    """One (predicted, gold) row per PANAS item, with the record each came from."""
    rows, owners = [], []
    for i, view in enumerate(views):
        given = view.prediction.panas if view.parsed and view.prediction else {}
        for name, truth in view.gold.panas.items():
            rows.append((given.get(name), truth))
            owners.append(i)
    return metrics.pairs(rows), np.array(owners, dtype=np.int64)


def _numbers(name: str) -> tuple[metrics.Metric, ...]:
    low, high = SCALES[name]
    at = 3 * list(SCALES).index(name)  # this number's columns of `_number_rows`

    def coverage(values: FloatArray, weights: Weights) -> FloatArray:
        return metrics.mean_statistic(values[:, at + 2 : at + 3], weights)

    def spearman(values: FloatArray, weights: Weights) -> FloatArray:
        return metrics.spearman_statistic(values[:, at : at + 2], weights)

    return (
        metrics.column_metric(
            f"{name}_mae",
            f"mean absolute {name} error (missing: {high - low:g})",
            metrics.Column(ASKED[name]),
            higher_is_better=False,
        ),
        metrics.Metric(
            f"{name}_coverage", f"share of items with an answer for {name}", _number_rows, coverage
        ),
        metrics.Metric(
            f"{name}_spearman",
            f"Spearman's rho of predicted and reported {name}",
            _number_rows,
            spearman,
        ),
    )


class EmotionScoring(grouping.GroupedScoring[EmotionGold, EmotionPrediction]):
    headline = "macro-F1 of the primary label within each corpus part"
    headline_metric = "macro_f1"
    crowd = "reference/position-only"
    grouped = grouping.Grouped(usual_label, label_guess)

    def retests(
        self, conversations: Iterable[Conversation]
    ) -> Iterator[tasks.Repeat[EmotionGold, EmotionPrediction]]:
        for conversation in conversations:
            if not conversation.probes or derived.conversation_level(conversation):
                continue
            turns = {turn.index: turn for turn in conversation.turns}
            for probe in conversation.probes:
                turn = turns.get(probe.turn)
                first = turn_gold(turn) if turn is not None else None
                if turn is None or first is None or probe.state is None or not first.labels:
                    continue
                gold = shown(conversation, turn.index, first)
                item = next(
                    tasks.in_contexts(self.task, conversation, turn.index, gold.level, gold)
                )
                yield tasks.Repeat(item, again(probe.state, gold))

    def chance(self, golds: Sequence[EmotionGold]) -> float | None:
        """1/K for the K primary labels of each corpus part, averaged as the headline is."""

        def one_in_k(group: list[EmotionGold]) -> float | None:
            labels = {gold.primary for gold in group if gold.primary}
            return 1.0 / len(labels) if labels else None

        return tasks.chance_by_part(golds, one_in_k)

    def answered_gold(self, gold: EmotionGold, prediction: EmotionPrediction) -> EmotionGold | None:
        """The labels named, and each number the person reported that the answer gives."""
        if prediction.primary is None:
            return None
        numbers = {n: prediction.number(n) if gold.number(n) is not None else None for n in SCALES}
        panas = {k: v for k, v in prediction.panas.items() if k in gold.panas and v is not None}
        emotions = tuple(prediction.emotions) or (prediction.primary,)
        update = {"primary": prediction.primary, "emotions": emotions, "panas": panas}
        return gold.model_copy(update={**update, **numbers})

    def choice_gold(self, item: tasks.Item[EmotionGold], query: tasks.Query) -> str | None:
        # Only the label question is scored by accuracy; the numbers are scored by their error.
        return item.gold.primary if query.key == "label" else None

    def label_sets(self, view: EmotionView) -> tuple[frozenset[str], frozenset[str]] | None:
        return _primary_sets(view) if view.gold.primary else None

    @staticmethod
    def calibration_rows(view: EmotionView) -> list[tuple[Mapping[str, float], str]]:
        guess, primary = view.prediction, view.gold.primary
        if guess is None or not guess.label_probabilities or primary is None:
            return []
        return [(guess.label_probabilities, primary)]

    metrics = metrics.register(
        TASK,
        metrics.column_metric("score", "primary-label accuracy"),
        metrics.f1_metric("macro_f1", headline, _primary_sets, metrics.macro_f1_statistic),
        metrics.pooled_macro_f1(_primary_sets),
        metrics.column_metric("jaccard", "Jaccard overlap of the named and reported emotions"),
        metrics.f1_metric(
            "labels_micro_f1",
            "micro-F1 over every reported emotion",
            _label_sets,
            metrics.micro_f1_statistic,
        ),
        metrics.f1_metric(
            "labels_macro_f1",
            "macro-F1 over every reported emotion",
            _label_sets,
            metrics.macro_f1_statistic,
        ),
        *_numbers("intensity"),
        *_numbers("valence"),
        *_numbers("arousal"),
        *tasks.calibration_metrics(calibration_rows),
        metrics.column_metric(
            "panas_mae",
            "mean absolute PANAS item error (missing: 4)",
            metrics.Column("panas_abs_error"),
            higher_is_better=False,
        ),
        metrics.Metric(
            "panas_spearman",
            "Spearman's rho of predicted and reported PANAS items",
            _panas_rows,
            metrics.spearman_statistic,
        ),
    )


@tasks.register_task(TASK)
class EmotionTask(tasks.Task[EmotionGold, EmotionPrediction], scoring=EmotionScoring):
    """Emotion recognition; `context` is blind (default), informed, or both; `messages` and
    `words` set the budget of a conversation-level item."""

    name = TASK
    gold_fields = ("state", "context.emotion")
    subject_forms = (ANSWERS,)
    answer_modes = ("generate", "choice")
    templates = (PROMPT, CHOICE_PROMPT)

    def __init__(
        self,
        context: str = history.DEFAULT_CONTEXT,
        messages: int = derived.DEFAULT_MESSAGES,
        words: int = derived.DEFAULT_WORDS,
        seed: int = 0,
    ) -> None:
        if messages < 1 or words < 0:
            raise ValueError("messages must be >= 1 and words >= 0")
        super().__init__(context)
        self.messages, self.words = messages, words

    def gold_counts(self, conversations: Iterable[Conversation]) -> tasks.GoldCounts:
        """Turns with a state; apart, conversations with a context emotion."""
        conversations = list(conversations)
        states = sum(turn.state is not None for c in conversations for turn in c.turns)
        context = sum(c.context.emotion is not None for c in conversations)
        return tasks.GoldCounts(
            {"turns_with_state": states, "conversations_with_context_emotion": context},
            {
                TASK: (states, ("state", "state.intensity")),
                "context emotion": (context, ("context.emotion",)),
            },
        )

    def items(self, conversations: Iterable[Conversation]) -> Iterator[tasks.Item[EmotionGold]]:
        for conversation in conversations:
            if derived.conversation_level(conversation):
                at = derived.budget_turn(conversation, self.messages, self.words)
                golds = [(at, conversation_gold(conversation))]
            else:
                golds = [(turn.index, g) for turn in conversation.turns if (g := turn_gold(turn))]
            for turn_index, found in golds:
                gold = shown(conversation, turn_index, found)
                yield from tasks.in_contexts(self, conversation, turn_index, gold.level, gold)

    def _fields(self, item: tasks.Item[EmotionGold], template: PromptTemplate) -> dict[str, str]:
        whole = item.gold.level == "conversation"
        situation = item.conversation.context.situation if whole else None
        said = history.history_through(item.conversation, item.turn_index)
        shown = prompting.shown_fields(item, said, item.turn_index, situation=situation)
        return {**shown, "question": template.text("whole" if whole else "turn")}

    def queries(self, item: tasks.Item[EmotionGold], mode: tasks.AnswerMode) -> list[tasks.Query]:
        conversation, gold, labels = item.conversation, item.gold, item.taxonomy.emotions
        said = [
            u.text
            for u in history.history_through(conversation, item.turn_index)
            if u.speaker == "user"
        ]
        hint = TaskHint(
            text="\n".join(said[-1:] if gold.level == "turn" else said),
            labels=tuple(label.name for label in labels),
            history=history.hint_history(history.history_before(conversation, item.turn_index)),
            form=ANSWERS,
        )
        if mode == "generate":
            fields = self._fields(item, PROMPT)
            panas = "\n" + PROMPT.text("panas", names=", ".join(gold.panas)) if gold.panas else ""
            messages = PROMPT.render(**fields, labels=prompting.label_menu(labels), panas=panas)
            return [tasks.Query("answer", messages, PROMPT.info, hint=hint)]
        fields = self._fields(item, CHOICE_PROMPT)
        base = CHOICE_PROMPT.render(**{**fields, "question": ""})
        menu = [(label.name, f"{label.name} ({label.description})") for label in labels]
        digits = [(d, d) for d in INTENSITY_KEYS]
        asked = [("label", fields["question"], menu)]
        if gold.intensity is not None:
            asked.append(("intensity", CHOICE_PROMPT.text("intensity"), digits))
        asked += [(f"panas:{k}", CHOICE_PROMPT.text("panas", name=k), digits) for k in gold.panas]
        return [
            prompting.choice_query(key, base, CHOICE_PROMPT.info, hint, question, options)
            for key, question, options in asked
        ]

    def parse(
        self, item: tasks.Item[EmotionGold], outputs: Mapping[str, tasks.Output]
    ) -> EmotionPrediction:
        gold = item.gold
        if "answer" not in outputs:
            return self._from_choices(item, outputs)
        found = tasks.answer_fields(outputs["answer"].text or "")
        labels = item.taxonomy.emotions
        if found.get("primary") is None:
            raise tasks.InvalidAnswer("the answer has no primary emotion")
        primary = parsing.one_label(found["primary"], labels, "primary emotion")
        listed = found.get("emotions")
        emotions = () if listed is None else tasks.label_list(listed, labels, "emotion")
        numbers = {n: parsing.bounded_number(found.get(n), *SCALES[n], n) for n in SCALES}
        # the PANAS items asked, read from the answer's `panas` object (names in any case)
        given = found.get("panas")
        named = {str(k).lower(): v for k, v in given.items()} if isinstance(given, dict) else {}
        panas = {k: parsing.bounded_number(named.get(k.lower()), *PANAS, k) for k in gold.panas}
        return EmotionPrediction(
            primary=primary,
            emotions=tuple(dict.fromkeys((primary, *emotions))),
            panas=panas,
            asked=tuple(n for n in SCALES if gold.number(n) is not None),
            **numbers,
        )

    def _from_choices(
        self, item: tasks.Item[EmotionGold], outputs: Mapping[str, tasks.Output]
    ) -> EmotionPrediction:
        def spread(key: str) -> dict[str, float]:
            return dict(outputs[key].probabilities or {})

        # each option's key in the label question, as `queries` asked it
        labels = [(label.name, label.name) for label in item.taxonomy.emotions]
        names = {key: name for name, key in prompting.option_keys(labels).items()}
        label_p = spread("label")
        primary = parsing.most_probable(label_p, names)
        digits = {d: float(d) for d in INTENSITY_KEYS}
        panas = {k: parsing.expected_value(spread(f"panas:{k}"), digits) for k in item.gold.panas}
        intensity = (
            parsing.expected_value(spread("intensity"), digits) if "intensity" in outputs else None
        )
        return EmotionPrediction(
            primary=primary,
            emotions=(primary,),
            intensity=intensity,
            panas=panas,
            asked=("intensity",) if intensity is not None else (),
            label_probabilities={names[k]: p for k, p in label_p.items()},
        )

    def score(self, item: tasks.Item[EmotionGold], prediction: EmotionPrediction) -> tasks.Scored:
        return score_prediction(item.gold, prediction)

    def worst(
        self, item: tasks.Item[EmotionGold], partial: EmotionPrediction | None
    ) -> tasks.Scored:
        return score_prediction(item.gold, NOTHING)
