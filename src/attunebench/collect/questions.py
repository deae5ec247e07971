"""The questions a study asks: per turn, about the participant (traits), at the end, and at the
door (screening); `examples/study.toml` shows every key. A per-turn question is "off",
"optional" or "required"; the defaults ask little, since each extra one costs attention on
every turn.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from attunebench.frozen import Frozen

Text = Annotated[str, Field(min_length=1, max_length=20_000)]
Key = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_-]*$")]
Option = Annotated[str, Field(min_length=1, max_length=200)]
Ask = Literal["off", "optional", "required"]

# The international short form of PANAS (Thompson 2007): five positive, five negative items.
PANAS_ITEMS = (
    *("upset", "hostile", "alert", "ashamed", "inspired"),
    *("nervous", "determined", "attentive", "afraid", "active"),
)

# Stored studies from before the three levels said true/false; true kept the old behaviour,
# under which these answers could not be left out.
_WERE_REQUIRED = frozenset({"emotions", "intensity", "valence", "arousal", "panas"})
_RENAMED = {"wanted": "comment", "wanted_behaviors": "comment_behaviors"}


class TurnQuestions(Frozen):
    """What every turn asks besides the message and the pick, which are always asked: see
    docs/collecting.md, "Before the replies, and after"."""

    emotions: Ask = "required"
    primary: Ask = "optional"
    intensity: Ask = "optional"
    valence: Ask = "off"
    arousal: Ask = "off"
    panas: Ask = "off"
    need: Ask = "optional"
    need_behaviors: Ask = "off"
    behaviors: Ask = "off"
    strength: Ask = "optional"
    comment: Ask = "off"
    comment_behaviors: Ask = "off"

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {_RENAMED.get(key, key): value for key, value in data.items()}
        for key, value in data.items():
            if value is True:
                data[key] = "required" if key in _WERE_REQUIRED else "optional"
            elif value is False:
                data[key] = "off"
        return data

    def asks(self, name: str) -> bool:
        return bool(getattr(self, name) != "off")

    def requires(self, name: str) -> bool:
        return bool(getattr(self, name) == "required")


class Question(Frozen):
    id: Key
    text: Text
    kind: Literal["text", "choice", "scale"] = "text"
    options: tuple[Option, ...] = ()
    min: int = 1
    max: int = 5
    min_label: str = ""
    max_label: str = ""
    required: bool = False

    @model_validator(mode="after")
    def _kind_fits(self) -> Question:
        if self.kind == "choice" and len(self.options) < 2:
            raise ValueError("a choice question needs at least two options")
        if self.kind != "choice" and self.options:
            raise ValueError(f"options are only for choice questions (this one is {self.kind!r})")
        if self.kind == "scale" and self.min >= self.max:
            raise ValueError(f"scale min ({self.min}) must be below max ({self.max})")
        return self


class EndSurvey(Frozen):
    final_state: bool = True
    questions: tuple[Question, ...] = ()
    rating_question: Key | None = None  # the scale question whose answer is the overall rating

    @model_validator(mode="after")
    def _rating_is_scale(self) -> EndSurvey:
        if self.rating_question is None:
            return self
        found = next((q for q in self.questions if q.id == self.rating_question), None)
        if found is None or found.kind != "scale":
            raise ValueError(f"rating_question {self.rating_question!r} is not a scale question")
        return self


class Screening(Frozen):
    """One multiple-choice question asked on the open link before anyone is enrolled."""

    text: Text
    options: tuple[Option, ...] = Field(min_length=2)
    eligible: tuple[Option, ...] = Field(min_length=1, description="Answers that may take part.")
    ineligible_message: str = (
        "Thank you for your interest. This study is looking for other participants, so there "
        "is nothing more to do."
    )

    @model_validator(mode="after")
    def _eligible_are_options(self) -> Screening:
        unknown = [o for o in self.eligible if o not in self.options]
        if unknown:
            raise ValueError(f"eligible answer {unknown[0]!r} is not one of the options")
        return self


# The query parameters a recruitment platform opens the study link with, per preset. Prolific
# appends PROLIFIC_PID, STUDY_ID and SESSION_ID when the study URL is set to record them
# (Prolific's researcher help, "Recording Prolific IDs via URL parameters").
PLATFORM_PRESETS = {
    "prolific": {
        "name": "Prolific",
        "participant_param": "PROLIFIC_PID",
        "study_param": "STUDY_ID",
        "session_param": "SESSION_ID",
    }
}
Param = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]


class Platform(Frozen):
    """A recruitment platform (Prolific, MTurk, ...) that sends participants to the open link
    with its identifiers in the query and is told, at the end, who finished and who did not."""

    preset: Literal["prolific"] | None = None
    name: str = Field(default="", max_length=100, description="Shown to participants.")
    participant_param: Param | None = None
    study_param: Param | None = None
    session_param: Param | None = None
    completion_url: str | None = Field(default=None, pattern=r"^https?://")
    completion_code: str | None = Field(default=None, min_length=1, max_length=100)
    screened_out_url: str | None = Field(default=None, pattern=r"^https?://")
    screened_out_code: str | None = Field(default=None, min_length=1, max_length=100)
    timeout_minutes: int = Field(default=60, ge=1, le=10_080)

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data: Any) -> Any:
        """A preset fills what the platform fixes; keys the file gives win."""
        if not isinstance(data, dict) or data.get("preset") not in PLATFORM_PRESETS:
            return data
        return {**PLATFORM_PRESETS[data["preset"]], **data}

    @model_validator(mode="after")
    def _complete(self) -> Platform:
        if self.participant_param is None:
            raise ValueError('participant_param is required (or preset = "prolific")')
        if self.completion_url is None and self.completion_code is None:
            raise ValueError("a completion_url or a completion_code is required")
        if self.screened_out_url is None and self.screened_out_code is None:
            raise ValueError("a screened_out_url or a screened_out_code is required")
        return self

    @property
    def shown_name(self) -> str:
        return self.name or "the recruitment platform"

    @property
    def params(self) -> dict[str, str]:
        """The identifier each query parameter carries: participant, study, session."""
        named = {
            "participant": self.participant_param,
            "study": self.study_param,
            "session": self.session_param,
        }
        return {role: param for role, param in named.items() if param is not None}


class Enrolment(Frozen):
    """Who may take part: invitation links, and, when `open`, the open link (docs/collecting.md)."""

    open: bool = False
    cap: int | None = Field(default=None, ge=1, le=1_000_000)
    screening: Screening | None = None
    simulated: bool = False  # accept `collect simulate`'s participants on the open link
    platform: Platform | None = None

    @model_validator(mode="after")
    def _open_has_cap(self) -> Enrolment:
        if self.open and self.cap is None:
            raise ValueError("an open link needs a cap (enrolment.cap)")
        if not self.open and (self.screening is not None or self.simulated):
            raise ValueError("screening and simulated participants need enrolment.open = true")
        if not self.open and self.platform is not None:
            raise ValueError("a recruitment platform (enrolment.platform) needs open = true")
        return self


ATTENTION_CHECK = "attention_check"  # the end survey's answer to it is stored under this id


class AttentionCheck(Frozen):
    """An instructed-response item asked in the end survey ("To show you are reading, choose
    'rarely'"): any other answer marks the participant careless."""

    text: Text
    options: tuple[Option, ...] = Field(min_length=2)
    answer: Option

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> AttentionCheck:
        if self.answer not in self.options:
            raise ValueError(f"answer {self.answer!r} is not one of the options")
        return self


class Quality(Frozen):
    """When a participant's answers count as careless (quality.py computes the signals; each
    setting is explained in docs/collecting.md, "Careless answers")."""

    min_seconds_per_turn: float = Field(default=10.0, ge=0, le=600)
    min_message_chars: int = Field(default=10, ge=0, le=1000)
    similarity: float = Field(default=0.9, gt=0, le=1)
    straight_line_turns: int = Field(default=3, ge=2, le=100)
    share: float = Field(default=0.5, gt=0, le=1)
    signals: int = Field(default=2, ge=1, le=4)
    attention_check: AttentionCheck | None = None
