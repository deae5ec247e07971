"""What the realism simulations record: each simulated message, label, intensity and grade
beside the real person's at the same point, written to the validation folder as JSON Lines
(`realism.jsonl`), so every figure can be checked against what was said."""

from __future__ import annotations

from typing import Literal

from attunebench.frozen import Frozen


class Written(Frozen):
    """A message the simulated person wrote, beside the one the person wrote there."""

    conversation_id: str
    turn_index: int
    rollout: int
    text: str | None  # None: no message (the call failed)
    real: str
    prompt_id: str
    error: str | None = None


class Continued(Frozen):
    """One turn of a real conversation continued as the writer, and labelled by them."""

    kind: Literal["continue"] = "continue"
    written: Written
    third: int
    label: str | None = None
    real_label: str | None = None
    # Whether each label is a negative feeling, as the taxonomy says (None: it does not say).
    negative: bool | None = None
    real_negative: bool | None = None
    error: str | None = None


class Sought(Frozen):
    """One conversation played as the seeker: the messages, and the intensity after it."""

    kind: Literal["seeker"] = "seeker"
    conversation_id: str
    rollout: int
    messages: list[Written]
    replies: list[str]
    before: float
    after: float | None = None
    real_after: float
    error: str | None = None


class Graded(Frozen):
    """One real message of the other side, graded by the simulated person."""

    kind: Literal["grade"] = "grade"
    conversation_id: str
    turn_index: int
    rollout: int
    source: str
    low: float
    high: float
    grade: float | None = None
    real: float
    error: str | None = None

    @property
    def middle(self) -> float:
        return (self.low + self.high) / 2
