"""Request and response shapes (pydantic), apart from the database tables in models.py.

Forms arrive as `{field: [values]}`; the parsers here check them against the study (which
questions it asks, its length limits) and the taxonomy (which labels exist), and raise
`FormError` naming the field, so a bad post is refused before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from attunebench.collect.study import PANAS_ITEMS, Question, Study
from attunebench.data.schema import Taxonomy

Form = Mapping[str, list[str]]
Choice = Literal["A", "B", "tie"]


class FormError(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class Schema(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StateAnswer(Schema):
    emotions: tuple[str, ...] = ()
    primary: str | None = None
    intensity: int | None = Field(default=None, ge=1, le=5)
    valence: float | None = Field(default=None, ge=-1, le=1)
    arousal: float | None = Field(default=None, ge=0, le=1)
    panas: dict[str, int] | None = None


class MessageAnswer(Schema):
    message: str
    state: StateAnswer


class JudgeAnswer(Schema):
    behaviors: dict[str, tuple[str, ...]]
    choice: Choice
    strength: int | None = Field(default=None, ge=1, le=3)
    wanted: str | None = None
    wanted_behaviors: tuple[str, ...] = ()


class SurveyAnswer(Schema):
    final_state: StateAnswer | None
    answers: dict[str, str | float]


class Progress(Schema):
    """What `collect status` prints and the admin dashboard shows."""

    study: str
    invited: int
    consented: int
    declined: int
    started: int
    finished: int
    turns: int
    picked_turns: int
    flagged_replies: int
    per_model: dict[str, dict[str, int]]
    per_position: dict[str, int]


def _one(form: Form, field: str) -> str:
    values = form.get(field, [])
    return values[0].strip() if values else ""


def text_field(form: Form, field: str, limit: int, required: bool = False) -> str | None:
    value = _one(form, field)
    if len(value) > limit:
        raise FormError(field, f"is longer than {limit} characters")
    if required and not value:
        raise FormError(field, "is required")
    return value or None


def _number(form: Form, field: str, low: float, high: float, required: bool) -> float | None:
    raw = _one(form, field)
    if not raw:
        if required:
            raise FormError(field, "is required")
        return None
    try:
        value = float(raw)
    except ValueError:
        raise FormError(field, f"{raw[:20]!r} is not a number") from None
    if not low <= value <= high:
        raise FormError(field, f"must be between {low:g} and {high:g}")
    return value


def labels(form: Form, field: str, allowed: frozenset[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(v for v in form.get(field, []) if v))
    unknown = [label for label in chosen if label not in allowed]
    if unknown:
        raise FormError(field, f"unknown label {unknown[0][:50]!r}")
    return chosen


def parse_state(form: Form, study: Study, taxonomy: Taxonomy) -> StateAnswer:
    asks = study.questions
    emotions = labels(form, "emotions", taxonomy.emotion_names()) if asks.emotions else ()
    if asks.emotions and not emotions:
        raise FormError("emotions", "pick at least one emotion")
    primary = _one(form, "primary") or None
    if primary is not None and primary not in emotions:
        raise FormError("primary", "must be one of the emotions you picked")
    if primary is None and len(emotions) == 1:
        primary = emotions[0]
    intensity = _number(form, "intensity", 1, 5, asks.intensity) if asks.intensity else None
    valence = _number(form, "valence", -100, 100, asks.valence) if asks.valence else None
    arousal = _number(form, "arousal", 0, 100, asks.arousal) if asks.arousal else None
    panas = None
    if asks.panas:
        panas = {item: int(_number(form, f"panas_{item}", 1, 5, True) or 0) for item in PANAS_ITEMS}
    return StateAnswer(
        emotions=emotions,
        primary=primary,
        intensity=None if intensity is None else round(intensity),
        valence=None if valence is None else valence / 100,
        arousal=None if arousal is None else arousal / 100,
        panas=panas,
    )


def parse_message(form: Form, study: Study, taxonomy: Taxonomy) -> MessageAnswer:
    message = text_field(form, "message", study.limits.message_chars, required=True)
    assert message is not None
    return MessageAnswer(message=message, state=parse_state(form, study, taxonomy))


def parse_judge(form: Form, study: Study, taxonomy: Taxonomy) -> JudgeAnswer:
    allowed = taxonomy.behavior_names()
    behaviors = {}
    for position in ("A", "B"):
        field = f"behaviors_{position}"
        behaviors[position] = labels(form, field, allowed) if study.questions.behaviors else ()
    choice = _one(form, "choice")
    if choice != "A" and choice != "B" and choice != "tie":  # spelled out so mypy narrows it
        raise FormError("choice", "pick Reply A, Reply B or 'about the same'")
    strength = None
    if study.questions.strength and choice != "tie":
        value = _number(form, "strength", 1, 3, required=False)
        strength = None if value is None else round(value)
    wanted = (
        text_field(form, "wanted", study.limits.answer_chars) if study.questions.wanted else None
    )
    wanted_behaviors: tuple[str, ...] = ()
    if study.questions.wanted_behaviors:
        wanted_behaviors = labels(form, "wanted_behaviors", allowed)
    return JudgeAnswer(
        behaviors=behaviors,
        choice=choice,
        strength=strength,
        wanted=wanted,
        wanted_behaviors=wanted_behaviors,
    )


def parse_question(form: Form, question: Question, limit: int) -> str | float | None:
    field = f"q_{question.id}"
    if question.kind == "scale":
        return _number(form, field, question.min, question.max, question.required)
    value = text_field(form, field, limit, question.required)
    if question.kind == "choice" and value is not None and value not in question.options:
        raise FormError(field, "is not one of the options")
    return value


def parse_answers(form: Form, questions: tuple[Question, ...], limit: int) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for question in questions:
        value = parse_question(form, question, limit)
        if value is not None:
            answers[question.id] = value
    return answers


def parse_survey(form: Form, study: Study, taxonomy: Taxonomy) -> SurveyAnswer:
    final_state = parse_state(form, study, taxonomy) if study.end.final_state else None
    answers = parse_answers(form, study.end.questions, study.limits.answer_chars)
    return SurveyAnswer(final_state=final_state, answers=answers)
