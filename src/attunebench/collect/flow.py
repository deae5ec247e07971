"""Where a participant is in the study, derived from what they have answered so far.

Nothing but the answers themselves is stored, so a reload, a lost connection or a restarted
server always lands on the right page. Every form carries the step it answers; a post for any
other step (a double click, a resubmitted old page) changes nothing and just shows the current
page.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from attunebench.collect.models import ParticipantRow, TurnRow
from attunebench.collect.retest import Kind, due
from attunebench.collect.study import Study


class Stage(StrEnum):
    CONSENT = "consent"
    TRAITS = "traits"
    MESSAGE = "message"
    PENDING = "pending"  # message saved, replies not generated yet (or generation failed)
    JUDGE = "judge"
    PROBE = "probe"  # a question of an earlier turn asked again (retest.py)
    SURVEY = "survey"
    DONE = "done"
    DECLINED = "declined"
    LEFT = "left"  # left through the support page, or screened out at the door


@dataclass(frozen=True, slots=True)
class Where:
    stage: Stage
    # the turn being written (MESSAGE), judged (PENDING, JUDGE) or re-asked (PROBE); else
    # turns so far
    turn: int
    probe: Kind | None = None  # which question a PROBE asks again

    @property
    def step(self) -> str:
        asked = "" if self.probe is None else f":{self.probe}"
        return f"{self.stage.value}:{self.turn}{asked}"


def where(participant: ParticipantRow, study: Study) -> Where:
    turns = participant.turns
    count = len(turns)
    if participant.declined_at is not None:
        return Where(Stage.DECLINED, count)
    if participant.finished_at is not None:
        return Where(Stage.DONE, count)
    if participant.left_at is not None or participant.screened_out_at is not None:
        return Where(Stage.LEFT, count)
    if participant.consented_at is None:
        return Where(Stage.CONSENT, 0)
    if study.traits and participant.traits_at is None:
        return Where(Stage.TRAITS, 0)
    last: TurnRow | None = turns[-1] if turns else None
    if last is not None and len(last.replies) < 2:
        return Where(Stage.PENDING, last.index)
    if last is not None and last.picked_at is None:
        return Where(Stage.JUDGE, last.index)
    probe = due(participant, study)
    if probe is not None:
        return Where(Stage.PROBE, *probe)
    if participant.ended_at is not None or count >= study.turns.max:
        return Where(Stage.SURVEY, count)
    return Where(Stage.MESSAGE, count)


def may_end(participant: ParticipantRow, study: Study, at: Where | None = None) -> bool:
    """Whether the participant may close the conversation now (enough complete turns); `at`
    is where they are, when the caller knows it already."""
    at = at or where(participant, study)
    return at.stage == Stage.MESSAGE and len(participant.turns) >= study.turns.min
