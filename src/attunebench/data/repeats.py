"""Runs of identical turns or lines: the trace of a corpus imported one row per annotator.

`data validate` reports them as warnings, since a person may repeat themselves, and suggests
`data import csv --annotator-col` only where annotators' rows could be the cause: lines
repeated within one message, or repeated turns that carry labels.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

from attunebench.data.schema import Conversation, Turn

# A line said twice in a row is common (ESConv's supporters re-sent 11 lines in the 2,295 replies
# of its test split); three times is rarer (MELD 6 runs in 1,432 dialogues, USS 4 in 2,000), and
# a corpus kept once per annotator repeats every utterance that often.
MIN_LINE_RUN = 3


@dataclass(frozen=True, slots=True)
class Repeat:
    """One run: where it is, and what repeats how often."""

    conversation_id: str
    turn: int
    what: str
    times: int
    annotators: bool  # whether several annotators' rows could be its cause

    def __str__(self) -> str:
        return f"conversation {self.conversation_id}, turn {self.turn}: {self.what} {self.times}x"


def _labelled(turns: Sequence[Turn]) -> bool:
    """Whether a turn carries what annotators give: an emotion, a reply's labels, a pick."""
    return any(
        (turn.state is not None and bool(turn.state.emotions))
        or turn.preference is not None
        or any(r.behaviors or r.rating is not None for r in turn.responses)
        for turn in turns
    )


def _said(turn: Turn) -> tuple[str, tuple[str, ...]]:
    return turn.user, tuple(response.text for response in turn.responses)


def _line_runs(text: str) -> Iterator[tuple[str, int]]:
    lines = [line.strip() for line in text.splitlines()]
    for line, run in groupby(lines):
        times = sum(1 for _ in run)
        if line and times >= MIN_LINE_RUN:
            yield line, times


def repeats(conversation: Conversation) -> list[Repeat]:
    """Every run of identical consecutive turns, and of identical lines within one message."""
    found: list[Repeat] = []
    for _, group in groupby(conversation.turns, key=_said):
        run = list(group)
        if len(run) > 1:
            what = f"the same user message and reply ({_short(run[0].user)}) repeats"
            found.append(Repeat(conversation.id, run[0].index, what, len(run), _labelled(run)))
    for turn in conversation.turns:
        texts = [("user message", turn.user), *(("reply", r.text) for r in turn.responses)]
        for where, text in texts:
            for line, times in _line_runs(text):
                what = f"the {where} repeats the line {_short(line)}"
                found.append(Repeat(conversation.id, turn.index, what, times, annotators=True))
    return found


def _short(text: str, limit: int = 40) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[: limit - 1] + "…")
