"""The time a study costs a participant, which is what pay is set from: in all, and per turn
(the wait for the replies counts as part of the turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from attunebench.collect.crud import aware
from attunebench.collect.models import ParticipantRow, TurnRow
from attunebench.collect.schemas import Spread


def last_seen(participant: ParticipantRow) -> datetime:
    """The last moment the participant did anything the study recorded."""
    moments = [
        participant.created_at,
        participant.consented_at,
        participant.declined_at,
        participant.traits_at,
        participant.ended_at,
        participant.finished_at,
        participant.screened_out_at,
        participant.left_at,
    ]
    for turn in participant.turns:
        moments += [turn.created_at, turn.picked_at]
    moments += [probe.created_at for probe in participant.probes]
    return max(aware(moment) for moment in moments if moment is not None)


def minutes_spent(participant: ParticipantRow) -> float:
    """From arrival to the last thing done (to finishing, for a finisher)."""
    end = participant.finished_at or last_seen(participant)
    return _minutes(participant.created_at, end)


def turn_minutes(participant: ParticipantRow) -> list[float]:
    """Each picked turn's minutes, from the end of the step before it to its pick."""
    return [_minutes(start, picked) for _, start, picked in _picked(participant)]


def _picked(participant: ParticipantRow) -> list[tuple[TurnRow, datetime, datetime]]:
    """Each picked turn, when the step before it ended (consent, the traits, a question asked
    again, or the previous pick) and when it was picked; a turn with no step before is left out."""
    steps = [participant.consented_at, participant.traits_at]
    steps += [probe.created_at for probe in participant.probes]
    done = sorted(aware(moment) for moment in steps if moment is not None)
    found = []
    for turn in participant.turns:
        if turn.picked_at is None:
            continue
        picked = aware(turn.picked_at)
        before = [moment for moment in done if moment <= aware(turn.created_at)]
        if before:
            found.append((turn, before[-1], picked))
        done = sorted([*done, picked])
    return found


def spread(minutes: Sequence[float]) -> Spread:
    """Median and 90th percentile (linear interpolation between order statistics, numpy's
    default), in minutes rounded to a tenth of a second's worth.

    >>> spread([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    Spread(n=10, median=5.5, p90=9.1)
    """
    if not minutes:
        return Spread()
    median, p90 = np.percentile(np.asarray(minutes, dtype=float), [50, 90])
    return Spread(n=len(minutes), median=round(float(median), 3), p90=round(float(p90), 3))


def _minutes(start: datetime, end: datetime) -> float:
    return (aware(end) - aware(start)).total_seconds() / 60


def own_seconds(participant: ParticipantRow) -> list[float]:
    """Each picked turn's seconds of the participant's own time: writing (from the step before
    to the message) and reading and picking (from the replies to the pick). The models' time
    between the two is theirs, not the participant's, and is left out."""
    seconds = []
    for turn, start, picked in _picked(participant):
        if turn.replies:
            ready = max(aware(reply.created_at) for reply in turn.replies)
            writing = (aware(turn.created_at) - start).total_seconds()
            seconds.append(writing + max(0.0, (picked - ready).total_seconds()))
    return seconds
