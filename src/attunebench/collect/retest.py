"""Retest probes (docs/collecting.md, "Questions asked again"): which turns' questions a
participant is asked again, and when.

Every choice is a draw of the study's seed, the participant and the turn: where a participant
is follows from their stored answers alone (flow.py), and a reload never moves a probe."""

from __future__ import annotations

import random
from typing import Literal

from attunebench.collect.models import ParticipantRow, TurnRow
from attunebench.collect.study import Study

Kind = Literal["state", "pick"]
KINDS: tuple[Kind, ...] = ("state", "pick")
# A pick asked again shows the turn's replies in each other's places: the page's "A" is the
# turn's "B". The same mapping turns the answer back into the turn's positions.
SWAPPED = {"A": "B", "B": "A", "tie": "tie"}


def planned(study: Study, participant: str, turn: TurnRow) -> Kind | None:
    """The question of a picked turn that is asked again (None: the turn gets no probe): a
    draw of the study's seed, the participant and the turn, with probability `retest.share`."""
    share = study.retest.share
    if share <= 0 or turn.picked_at is None:
        return None
    draw = random.Random(f"{study.assignment.seed}:{participant}:{turn.index}:retest")
    if draw.random() >= share:
        return None
    asked: list[Kind] = ["state", "pick"] if (turn.state or {}).get("emotions") else ["pick"]
    return draw.choice(asked)


def due(participant: ParticipantRow, study: Study) -> tuple[int, Kind] | None:
    """The probe the participant is to answer now, if any: the turn it re-asks, and which of
    its questions."""
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
            return turn.index, kind
    return None
