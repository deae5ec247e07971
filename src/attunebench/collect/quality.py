"""Careless participation (docs/collecting.md, "Careless answers"): the signals that hold for a
participant, recomputed with each stored answer against the study's `[quality]` settings.

A participant is careless when `signals` of them hold, or the attention check is failed: one
alone is common in careful people, several together are what clicking through looks like
(Curran 2016, "Methods for the detection of carelessly invalid responses in survey data",
recommends combining indicators for the same reason)."""

from __future__ import annotations

import difflib
import re

from attunebench.collect.models import ParticipantRow
from attunebench.collect.questions import ATTENTION_CHECK, Quality
from attunebench.collect.timing import own_seconds

SIGNALS = ("fast", "repeated", "short", "straight-lined", "attention check")


def _repeats(messages: list[str], similarity: float) -> list[bool]:
    """Whether each message repeats (or nearly) one written before it.

    >>> _repeats(["I am sad", "i am  sad!", "Work is hard"], 0.9)
    [False, True, False]
    """
    plain = [re.sub(r"\s+", " ", m).strip().casefold() for m in messages]
    repeated = [False] * len(plain)
    for m, earlier in enumerate(plain):
        matcher = difflib.SequenceMatcher(None, b=earlier)  # indexes `earlier` once
        for n in range(m + 1, len(plain)):
            if not repeated[n]:
                matcher.set_seq1(plain[n])
                repeated[n] = _similar(matcher, similarity)
    return repeated


def _similar(matcher: difflib.SequenceMatcher[str], similarity: float) -> bool:
    """ratio() >= similarity, asked of its cheap upper bounds first: most pairs of messages
    are told apart by them, at a fraction of ratio()'s cost, and the answer is the same."""
    return (
        matcher.real_quick_ratio() >= similarity
        and matcher.quick_ratio() >= similarity
        and matcher.ratio() >= similarity
    )


def signals(participant: ParticipantRow, quality: Quality) -> list[str]:
    """The careless signals that hold for a participant so far, in SIGNALS order."""
    messages = [turn.user_text for turn in participant.turns]
    states = [turn.state for turn in participant.turns]
    seconds = own_seconds(participant)
    held = {
        "fast": _most([s < quality.min_seconds_per_turn for s in seconds], quality),
        # The first message has none before it to repeat.
        "repeated": _most(_repeats(messages, quality.similarity)[1:], quality),
        "short": _most([len(m.strip()) < quality.min_message_chars for m in messages], quality),
        "straight-lined": len(states) >= quality.straight_line_turns
        and all(state and state == states[0] for state in states),
        "attention check": _failed_check(participant, quality),
    }
    return [name for name in SIGNALS if held[name]]


def careless(held: list[str] | None, quality: Quality) -> bool:
    """Whether the signals that hold mark the participant careless."""
    held = held or []
    return "attention check" in held or len(held) >= quality.signals


def _most(held: list[bool], quality: Quality) -> bool:
    """Whether a signal holds on at least `share` of the turns it can be measured on."""
    return bool(held) and sum(held) / len(held) >= quality.share


def _failed_check(participant: ParticipantRow, quality: Quality) -> bool:
    check = quality.attention_check
    if check is None or participant.survey is None:
        return False
    return participant.survey.get(ATTENTION_CHECK) != check.answer
