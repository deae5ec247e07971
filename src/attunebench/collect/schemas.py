"""Request and response shapes (pydantic), apart from the database tables in models.py.

The answers here are what forms.py makes of a posted form once it passes every check. An
answer left out is None (or empty), never a default: an untouched slider is no answer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from attunebench.frozen import Frozen

Choice = Literal["A", "B", "tie"]
# Where a participant stands for a recruitment platform (platform.state).
State = Literal["started", "finished", "screened out", "timed out"]


class StateAnswer(Frozen):
    emotions: tuple[str, ...] = ()
    primary: str | None = None
    intensity: int | None = Field(default=None, ge=1, le=5)
    valence: float | None = Field(default=None, ge=-1, le=1)
    arousal: float | None = Field(default=None, ge=0, le=1)
    panas: dict[str, int] | None = None


class MessageAnswer(Frozen):
    message: str
    state: StateAnswer
    need_text: str | None = None
    need_behaviors: tuple[str, ...] = ()


class JudgeAnswer(Frozen):
    behaviors: dict[str, tuple[str, ...]]
    choice: Choice
    strength: int | None = Field(default=None, ge=1, le=3)
    comment: str | None = None
    comment_behaviors: tuple[str, ...] = ()


class ProbeAnswer(Frozen):
    """A question of an earlier turn answered again: its emotion check (`state`) or its pick
    (`choice`, as the page showed the replies: their places swapped)."""

    state: StateAnswer | None = None
    choice: Choice | None = None


class SurveyAnswer(Frozen):
    final_state: StateAnswer | None
    answers: dict[str, str | float]


class ModelProgress(Frozen):
    conversations: int = 0
    shown: int = 0
    chosen: int = 0
    ties: int = 0
    flagged: int = 0
    failures: int = 0
    last_failure: str | None = None


class ParticipantProgress(Frozen):
    """One participant as the researcher follows them: where they stand and the time spent."""

    id: str  # the public id, never a platform's identifier
    enrolment: str
    state: State
    minutes: float  # from arrival to the last thing done
    turns: int
    careless: bool = False
    careless_signals: list[str] = Field(default_factory=list)  # those that hold (quality.py)


class Spread(Frozen):
    """Median and 90th percentile of a duration, in minutes; None while nothing is measured."""

    n: int = 0
    median: float | None = None
    p90: float | None = None


class Progress(Frozen):
    """What `collect status` prints and the admin dashboard shows."""

    study: str
    invited: int
    open_enrolled: int
    simulated: int
    cap: int | None
    consented: int
    declined: int
    started: int
    finished: int
    turns: int
    picked_turns: int
    waiting_turns: int  # whose replies have not come (yet)
    flagged_replies: int
    generation_failures: int
    probes: dict[str, int] = Field(default_factory=dict)  # answered, per kind (state, pick)
    per_model: dict[str, ModelProgress]
    per_position: dict[str, int]
    participants: list[ParticipantProgress] = Field(default_factory=list)
    careless: int = 0  # participants marked careless
    minutes_per_participant: Spread = Field(default_factory=Spread)  # finished participants
    minutes_per_turn: Spread = Field(default_factory=Spread)  # picked turns (timing.py)
