"""The study file (TOML): what a collection study asks, of whom, and with which models.

Validated once, when `collect init` stores it; every error names the file, the key and what is
wrong, so a researcher can fix the file without reading this code.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from attunebench.collect.questions import (
    ATTENTION_CHECK,
    EndSurvey,
    Enrolment,
    Key,
    Quality,
    Question,
    Text,
    TurnQuestions,
)
from attunebench.data.schema import Taxonomy
from attunebench.data.taxonomy import UnknownTaxonomyError, load_taxonomy
from attunebench.frozen import Frozen, problem_text
from attunebench.models.registry import SpecError, parse_spec


class StudyError(ValueError):
    """A study file is unreadable or invalid; the message names file, key and problem."""


class PoolModel(Frozen):
    spec: str = Field(description="A provider spec, `provider/model`.")
    options: dict[str, Any] = Field(default_factory=dict, description="Passed to the provider.")

    @field_validator("spec")
    @classmethod
    def _spec_form(cls, spec: str) -> str:
        try:
            parse_spec(spec)
        except SpecError as error:
            raise ValueError(str(error)) from None
        return spec


class Generation(Frozen):
    system_prompt: str = ""
    temperature: float = Field(default=0.7, ge=0, le=2)
    max_tokens: int = Field(default=400, ge=1, le=8192)
    timeout_s: float = Field(default=60, gt=0, le=600)


class Assignment(Frozen):
    seed: int = 0


class Turns(Frozen):
    min: int = Field(default=3, ge=1, le=100)
    max: int = Field(default=8, ge=1, le=100)


class Resource(Frozen):
    name: Text
    contact: str = ""
    url: str = ""


class Safety(Frozen):
    notice: str = ""
    resources: tuple[Resource, ...] = ()
    keywords: tuple[Annotated[str, Field(min_length=2, max_length=100)], ...] = ()

    @property
    def configured(self) -> bool:
        return bool(self.notice or self.resources)

    def triggered_by(self, text: str) -> bool:
        """Whether a message holds a keyword (whole words, any case, spaces flexible).

        >>> Safety(notice="n", keywords=("kill myself", "hopeless")).triggered_by("I feel HOPELESS")
        True
        >>> Safety(notice="n", keywords=("hopeless",)).triggered_by("hopelessly devoted")
        False
        """
        if not self.keywords:
            return False
        words = "|".join(r"\s+".join(map(re.escape, k.split())) for k in self.keywords)
        return re.search(rf"(?<!\w)(?:{words})(?!\w)", text, re.IGNORECASE) is not None


class Limits(Frozen):
    message_chars: int = Field(default=2000, ge=10, le=20_000)
    answer_chars: int = Field(default=1000, ge=10, le=20_000)
    posts_per_minute: int = Field(default=30, ge=1, le=10_000)
    joins_per_minute: int = Field(
        default=60, ge=1, le=100_000, description="Open-link enrolments per client address."
    )


class Retest(Frozen):
    """Retest probes: questions asked again later in the same session, to measure how
    consistently a person answers (the ceiling of any model's prediction of them)."""

    share: float = Field(
        default=0.0, ge=0.0, le=1.0, description="The share of turns that get a probe."
    )


class Study(Frozen):
    version: Literal[1] = 1
    id: Key
    name: Text
    license: str | None = None
    taxonomy: str = "attunebench-default"
    consent: Text
    instructions: Text
    # How participants reach the researchers (to ask, or to have their answers deleted): shown
    # on the consent and thank-you pages. `collect init` requires it; a study stored before it
    # existed reads as "".
    researcher_contact: str = Field(default="", max_length=500)
    models: tuple[PoolModel, ...] = Field(min_length=2)
    generation: Generation = Field(default_factory=Generation)
    assignment: Assignment = Field(default_factory=Assignment)
    turns: Turns = Field(default_factory=Turns)
    questions: TurnQuestions = Field(default_factory=TurnQuestions)
    traits: tuple[Question, ...] = ()
    end: EndSurvey = Field(default_factory=EndSurvey)
    safety: Safety = Field(default_factory=Safety)
    limits: Limits = Field(default_factory=Limits)
    enrolment: Enrolment = Field(default_factory=Enrolment)
    retest: Retest = Field(default_factory=Retest)
    quality: Quality = Field(default_factory=Quality)
    # Filled at load time when `taxonomy` names a JSON file, so the stored study is self-contained.
    taxonomy_inline: Taxonomy | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Study:
        if self.turns.min > self.turns.max:
            raise ValueError(f"turns.min ({self.turns.min}) is above turns.max ({self.turns.max})")
        specs = [m.spec for m in self.models]
        if len(set(specs)) != len(specs):
            raise ValueError("models: each spec may appear only once in the pool")
        if any(q.id == ATTENTION_CHECK for q in self.end.questions):
            raise ValueError(f"end.questions: the id {ATTENTION_CHECK!r} is the attention check's")
        for group, questions in (("traits", self.traits), ("end.questions", self.end.questions)):
            ids = [q.id for q in questions]
            if len(set(ids)) != len(ids):
                raise ValueError(f"{group}: question ids must be unique")
        return self

    @property
    def survey_questions(self) -> tuple[Question, ...]:
        """The end survey's questions, the attention check (if any) last."""
        check = self.quality.attention_check
        if check is None:
            return self.end.questions
        asked = Question(
            id=ATTENTION_CHECK, text=check.text, kind="choice", options=check.options, required=True
        )
        return (*self.end.questions, asked)

    @property
    def pool(self) -> tuple[str, ...]:
        return tuple(m.spec for m in self.models)

    def load_taxonomy(self) -> Taxonomy:
        return self.taxonomy_inline or load_taxonomy(self.taxonomy)


def _describe(error: ValidationError, file: str) -> str:
    lines = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"]) or "(top level)"
        lines.append(f"{file}: {key}: {problem_text(item)}")
    return "\n".join(lines)


def parse_study(data: dict[str, Any], file: str = "<study>", base: Path | None = None) -> Study:
    """Validate a study mapping; `base` resolves a taxonomy given as a relative JSON path."""
    taxonomy = data.get("taxonomy", "attunebench-default")
    data = dict(data)
    if isinstance(taxonomy, str) and taxonomy.endswith(".json"):
        path = (base or Path.cwd()) / taxonomy
        try:
            data["taxonomy_inline"] = Taxonomy.model_validate_json(path.read_bytes())
        except (OSError, ValidationError) as error:
            raise StudyError(f"{file}: taxonomy: cannot load {path}: {error}") from None
        data["taxonomy"] = data["taxonomy_inline"].id
    try:
        study = Study.model_validate(data)
    except ValidationError as error:
        raise StudyError(_describe(error, file)) from None
    if study.taxonomy_inline is None:
        try:
            load_taxonomy(study.taxonomy)
        except UnknownTaxonomyError as error:
            raise StudyError(f"{file}: taxonomy: {error}") from None
    return study


def load_study(path: str | Path) -> Study:
    """Read and validate a study TOML file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise StudyError(f"{path}: cannot read: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise StudyError(f"{path}: not valid TOML: {error}") from None
    if not str(data.get("researcher_contact", "")).strip():
        raise StudyError(
            f"{path}: researcher_contact: required: how participants reach the researchers "
            "(an e-mail address or a web page), shown beside the deletion code"
        )
    return parse_study(data, file=str(path), base=path.parent)
