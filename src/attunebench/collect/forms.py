"""Posted forms checked against the study (which questions it asks and requires, its limits)
and the taxonomy (which labels exist). Every problem is kept, by form field (`FormErrors`), so
the page can show each beside its question and keep the other answers; an untouched slider is
no answer (docs/collecting.md, "Answers without defaults")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from attunebench.collect.questions import PANAS_ITEMS, Question
from attunebench.collect.schemas import (
    Choice,
    JudgeAnswer,
    MessageAnswer,
    ProbeAnswer,
    StateAnswer,
    SurveyAnswer,
)
from attunebench.collect.study import Study
from attunebench.data.schema import Taxonomy

Form = Mapping[str, list[str]]
A = TypeVar("A")
UNSET = "_unset"  # suffix of a slider's "not answered" box

# Each slider: form range, stored range, what the page calls it.
SLIDERS = {
    "intensity": ((1, 5), "how strong the feeling is"),
    "valence": ((-100, 100), "how pleasant it feels"),
    "arousal": ((0, 100), "how calm or activated you feel"),
}


class FormErrors(ValueError):
    """Problems with a posted form, by field, in plain words for the participant."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))
        self.errors = errors


class Reader:
    """Reads fields off a form, noting each problem instead of stopping at the first."""

    def __init__(self, form: Form, study: Study) -> None:
        self.form, self.study, self.asks = form, study, study.questions
        self.errors: dict[str, str] = {}

    def fail(self, field: str, message: str) -> None:
        self.errors.setdefault(field, message)

    def one(self, field: str) -> str:
        values = self.form.get(field, [])
        return values[0].strip() if values else ""

    def text(self, field: str, limit: int, required: bool = False) -> str | None:
        value = self.one(field)
        if len(value) > limit:
            self.fail(field, f"Please shorten this to {limit} characters at most.")
            return None
        if required and not value:
            self.fail(field, "Please answer this question.")
        return value or None

    def number(self, field: str, low: float, high: float, required: bool) -> float | None:
        raw = self.one(field)
        if not raw:
            if required:
                self.fail(field, "Please answer this question.")
            return None
        try:
            value = float(raw)
        except ValueError:
            self.fail(field, "This answer is not a number.")
            return None
        if not low <= value <= high:  # also refuses NaN
            self.fail(field, f"Pick a value from {low:g} to {high:g}.")
            return None
        return value

    def asked_slider(self, field: str) -> float | None:
        if not self.asks.asks(field):
            return None
        required = self.asks.requires(field)
        if self.one(field + UNSET):
            if required:
                self.fail(field, f"Please move the slider to say {SLIDERS[field][1]}.")
            return None
        (low, high), _ = SLIDERS[field]
        return self.number(field, low, high, required)

    def asked_text(self, field: str) -> str | None:
        """A per-turn question answered in words, where the study asks it."""
        if not self.asks.asks(field):
            return None
        return self.text(field, self.study.limits.answer_chars, self.asks.requires(field))

    def asked_labels(
        self, field: str, allowed: frozenset[str], question: str = ""
    ) -> tuple[str, ...]:
        """A per-turn question (`question`, else `field`) answered with labels, where asked."""
        question = question or field
        if not self.asks.asks(question):
            return ()
        chosen = tuple(dict.fromkeys(v for v in self.form.get(field, []) if v))
        unknown = [label for label in chosen if label not in allowed]
        if unknown:
            self.fail(field, f"{unknown[0][:50]!r} is not one of the choices.")
            return ()
        if self.asks.requires(question) and not chosen:
            self.fail(field, "Please pick at least one.")
        return chosen

    def done(self, answer: A) -> A:
        """The answer read, once no problem was noted (else FormErrors with them all)."""
        if self.errors:
            raise FormErrors(self.errors)
        return answer


def read_state(reader: Reader, taxonomy: Taxonomy) -> StateAnswer:
    asks = reader.asks
    emotions = reader.asked_labels("emotions", taxonomy.emotion_names())
    primary = None
    if asks.asks("emotions") and asks.asks("primary"):
        primary = reader.one("primary") or None
        if primary is not None and primary not in emotions:
            reader.fail("primary", "Pick the strongest among the emotions you ticked.")
            primary = None
        elif primary is None and len(emotions) > 1 and asks.requires("primary"):
            reader.fail("primary", "Please say which emotion is strongest.")
    if primary is None and len(emotions) == 1:
        primary = emotions[0]
    values = {name: reader.asked_slider(name) for name in SLIDERS}
    panas = None
    if asks.asks("panas"):
        given = {i: reader.number(f"panas_{i}", 1, 5, asks.requires("panas")) for i in PANAS_ITEMS}
        panas = {item: round(value) for item, value in given.items() if value is not None} or None
    intensity, valence, arousal = values["intensity"], values["valence"], values["arousal"]
    return StateAnswer(
        emotions=emotions,
        primary=primary,
        intensity=None if intensity is None else round(intensity),
        valence=None if valence is None else valence / 100,
        arousal=None if arousal is None else arousal / 100,
        panas=panas,
    )


def parse_message(form: Form, study: Study, taxonomy: Taxonomy) -> MessageAnswer:
    reader = Reader(form, study)
    message = reader.text("message", study.limits.message_chars, required=True)
    answer = MessageAnswer(
        message=message or "",
        state=read_state(reader, taxonomy),
        need_text=reader.asked_text("need"),
        need_behaviors=reader.asked_labels("need_behaviors", taxonomy.behavior_names()),
    )
    return reader.done(answer)


def parse_judge(form: Form, study: Study, taxonomy: Taxonomy) -> JudgeAnswer:
    reader = Reader(form, study)
    asks = study.questions
    allowed = taxonomy.behavior_names()
    behaviors = {p: reader.asked_labels(f"behaviors_{p}", allowed, "behaviors") for p in "AB"}
    choice = read_choice(reader)
    strength = None
    if asks.asks("strength") and choice != "tie":  # a tie has no "how much better"
        value = reader.number("strength", 1, 3, asks.requires("strength"))
        strength = None if value is None else round(value)
    answer = JudgeAnswer(
        behaviors=behaviors,
        choice=choice,
        strength=strength,
        comment=reader.asked_text("comment"),
        comment_behaviors=reader.asked_labels("comment_behaviors", allowed),
    )
    return reader.done(answer)


def read_choice(reader: Reader) -> Choice:
    choices: dict[str, Choice] = {"A": "A", "B": "B", "tie": "tie"}
    choice = choices.get(reader.one("choice"))
    if choice is None:
        reader.fail("choice", "Please pick Reply A, Reply B or 'about the same'.")
        return "tie"
    return choice


def parse_probe(form: Form, study: Study, taxonomy: Taxonomy) -> ProbeAnswer:
    """An earlier turn's question answered again: which one, the step says (`probe:N:state`,
    `probe:N:pick`), and a post is stored only while that is still the participant's step."""
    reader = Reader(form, study)
    asked = reader.one("step").rpartition(":")[2]
    if asked == "state":
        answer = ProbeAnswer(state=read_state(reader, taxonomy))
    else:
        answer = ProbeAnswer(choice=read_choice(reader))
    return reader.done(answer)


def read_question(reader: Reader, question: Question) -> str | float | None:
    field = f"q_{question.id}"
    if question.kind == "scale":
        return reader.number(field, question.min, question.max, question.required)
    value = reader.text(field, reader.study.limits.answer_chars, question.required)
    if question.kind == "choice" and value is not None and value not in question.options:
        reader.fail(field, "Please pick one of the options.")
        return None
    return value


def read_answers(reader: Reader, questions: tuple[Question, ...]) -> dict[str, str | float]:
    given = {question.id: read_question(reader, question) for question in questions}
    return {key: value for key, value in given.items() if value is not None}


def parse_traits(form: Form, study: Study, _taxonomy: Taxonomy) -> dict[str, str | float]:
    reader = Reader(form, study)
    return reader.done(read_answers(reader, study.traits))


def parse_survey(form: Form, study: Study, taxonomy: Taxonomy) -> SurveyAnswer:
    reader = Reader(form, study)
    final_state = read_state(reader, taxonomy) if study.end.final_state else None
    answers = read_answers(reader, study.survey_questions)
    return reader.done(SurveyAnswer(final_state=final_state, answers=answers))
