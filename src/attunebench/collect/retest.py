"""Retest probes: which turns' questions a participant is asked again, and when.

Whether a turn gets one (with probability `[retest] share`), and which question it repeats
(the emotion check, where one was answered, or the pick with the replies' places swapped), is
drawn from the study's seed, the participant and the turn: where a participant is follows from
their stored answers alone (flow.py), and a reload never moves a probe. A probe falls due once
a later turn is picked or the conversation is over, never right after its question, and is
asked before anything else, earliest turn first. Its answer is never gold.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final, Literal

from attunebench.collect.models import ParticipantRow, TurnRow
from attunebench.collect.study import Study

Kind = Literal["state", "pick"]
STATE: Final = "state"
PICK: Final = "pick"
KINDS: tuple[Kind, ...] = (STATE, PICK)
# A pick asked again shows the turn's replies in each other's places: the page's "A" is the
# turn's "B". The same mapping turns the answer back into the turn's positions.
SWAPPED = {"A": "B", "B": "A", "tie": "tie"}


@dataclass(frozen=True, slots=True)
class Due:
    """A probe to ask now: the turn it re-asks, and which of its questions."""

    turn: int
    kind: Kind


def planned(study: Study, participant: str, turn: TurnRow) -> Kind | None:
    """The question of a picked turn that is asked again (None: the turn gets no probe): a
    draw of the study's seed, the participant and the turn, with probability `retest.share`."""
    share = study.retest.share
    if share <= 0 or turn.picked_at is None:
        return None
    draw = random.Random(f"{study.assignment.seed}:{participant}:{turn.index}:retest")
    if draw.random() >= share:
        return None
    asked: list[Kind] = [STATE, PICK] if (turn.state or {}).get("emotions") else [PICK]
    return draw.choice(asked)


def due(participant: ParticipantRow, study: Study) -> Due | None:
    """The probe the participant is to answer now, if any."""
    if study.retest.share <= 0:
        return None
    picked = [turn for turn in participant.turns if turn.picked_at is not None]
    if not picked:
        return None
    over = participant.ended_at is not None or len(participant.turns) >= study.turns.max
    answered = {probe.turn_index for probe in participant.probes}
    last = picked[-1].index
    for turn in picked:
        if turn.index in answered or (turn.index == last and not over):
            continue
        kind = planned(study, participant.public_id, turn)
        if kind is not None:
            return Due(turn.index, kind)
    return None
