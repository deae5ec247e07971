"""The conversation as it happened up to a turn, and the two context modes: `blind` (the text
only) and `informed` (plus the participant's self-reports from earlier turns, never the one
evaluated). History never holds an evaluated model's outputs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from attunebench.data.schema import Conversation, State, Turn
from attunebench.tasks.helpers.wording import words

ContextMode = Literal["blind", "informed"]
ContextOption = Literal["blind", "informed", "both"]
CONTEXT_MODES: tuple[ContextMode, ...] = ("blind", "informed")
DEFAULT_CONTEXT: ContextOption = "blind"

Speaker = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Utterance:
    speaker: Speaker
    text: str
    turn_index: int | None = None  # None for the context's opening


@dataclass(frozen=True, slots=True)
class SelfReport:
    """What the participant said about their feelings after one earlier message."""

    turn_index: int
    state: State
    said: str  # the message it was reported at, so a prompt can quote it instead of a number


def context_modes(option: str) -> tuple[ContextMode, ...]:
    """The variants a task's `context` option asks for."""
    if option == "both":
        return CONTEXT_MODES
    if option in CONTEXT_MODES:
        return (option,)
    raise ValueError(f"context must be one of blind, informed, both (got {option!r})")


def turn_at(conversation: Conversation, turn_index: int) -> Turn:
    for turn in conversation.turns:
        if turn.index == turn_index:
            return turn
    raise KeyError(f"conversation {conversation.id!r} has no turn {turn_index}")


def history_before(conversation: Conversation, turn_index: int) -> tuple[Utterance, ...]:
    """Everything said before the user's message at `turn_index`, as it happened."""
    said: list[Utterance] = []
    if conversation.context.opening:
        said.append(Utterance("assistant", conversation.context.opening))
    for turn in conversation.turns:
        if turn.index >= turn_index:
            break
        said.append(Utterance("user", turn.user, turn.index))
        reply = turn.continued_response()
        if reply is not None:  # no recorded continuation: the user simply wrote again
            said.append(Utterance("assistant", reply.text, turn.index))
    return tuple(said)


def history_through(conversation: Conversation, turn_index: int) -> tuple[Utterance, ...]:
    """The history before turn t plus the user's message at t."""
    turn = turn_at(conversation, turn_index)
    return (*history_before(conversation, turn_index), Utterance("user", turn.user, turn.index))


def self_reports_before(conversation: Conversation, turn_index: int) -> tuple[SelfReport, ...]:
    return tuple(
        SelfReport(turn.index, turn.state, turn.user)
        for turn in conversation.turns
        if turn.index < turn_index and turn.state is not None
    )


def hint_history(utterances: Sequence[Utterance]) -> tuple[tuple[str, str], ...]:
    return tuple((u.speaker, u.text) for u in utterances)


def describe_state(state: State) -> str:
    """One line a reader (or a model) can take in: labels first, then the numbers."""
    parts: list[str] = []
    labels = list(state.emotions)
    if state.primary and state.primary not in labels:
        labels.insert(0, state.primary)
    if labels:
        named = ", ".join(labels)
        if state.primary:
            parts.append(words("felt_mostly", labels=named, primary=state.primary))
        else:
            parts.append(words("felt", labels=named))
    if state.intensity is not None:
        parts.append(words("intensity", value=f"{state.intensity:g}"))
    if state.valence is not None:
        parts.append(words("valence", value=f"{state.valence:+.2f}"))
    if state.arousal is not None:
        parts.append(words("arousal", value=f"{state.arousal:.2f}"))
    return "; ".join(parts) or words("no_feelings")
