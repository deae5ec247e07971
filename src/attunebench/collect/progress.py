"""How a study is going, for `collect status` and the admin dashboard (schemas.Progress).

A model whose replies keep failing leaves participants on "the replies are not ready yet";
counting its failures here is how an operator learns of it without reading the server log.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from attunebench.collect.crud import OPEN_ENROLMENTS, all_participants
from attunebench.collect.models import GenerationFailure, ParticipantRow
from attunebench.collect.platform import state
from attunebench.collect.quality import careless
from attunebench.collect.retest import KINDS
from attunebench.collect.schemas import ModelProgress, ParticipantProgress, Progress
from attunebench.collect.study import Study
from attunebench.collect.timing import minutes_spent, spread, turn_minutes


def _failures(session: Session) -> dict[str, tuple[int, str]]:
    """Per model: how many failures, and the latest one's message."""
    counts = session.execute(
        select(GenerationFailure.model, func.count(), func.max(GenerationFailure.id)).group_by(
            GenerationFailure.model
        )
    ).all()
    latest = {
        row.id: row.error
        for row in session.scalars(
            select(GenerationFailure).where(GenerationFailure.id.in_([c[2] for c in counts]))
        )
    }
    return {model: (count, latest[last]) for model, count, last in counts}


def progress(session: Session, study: Study) -> Progress:
    participants = all_participants(session)
    turns = [turn for participant in participants for turn in participant.turns]
    replies = [(turn, reply) for turn in turns for reply in turn.replies]
    per_model: defaultdict[str, Counter[str]] = defaultdict(Counter)
    per_model.update({spec: Counter() for spec in study.pool})
    for participant in participants:
        for model in (participant.model_first, participant.model_second):
            if model is not None:
                per_model[model]["conversations"] += 1
    for turn, reply in replies:
        per_model[reply.model].update(
            shown=1,
            chosen=turn.choice == reply.position,
            ties=turn.choice == "tie",
            flagged=bool(reply.flags),
        )
    failures = _failures(session)
    models = {}
    for model in sorted(set(per_model) | set(failures), key=lambda m: (m not in study.pool, m)):
        count, last = failures.get(model, (0, None))
        models[model] = ModelProgress(
            **per_model.get(model, Counter()), failures=count, last_failure=last
        )
    return Progress(
        study=study.id,
        invited=sum(p.enrolment == "invitation" for p in participants),
        open_enrolled=sum(
            p.enrolment in OPEN_ENROLMENTS and p.screened_out_at is None for p in participants
        ),
        simulated=sum(p.enrolment == "simulated" for p in participants),
        cap=study.enrolment.cap,
        consented=sum(p.consented_at is not None for p in participants),
        declined=sum(p.declined_at is not None for p in participants),
        started=sum(bool(p.turns) for p in participants),
        finished=sum(p.finished_at is not None for p in participants),
        turns=len(turns),
        picked_turns=sum(turn.choice is not None for turn in turns),
        waiting_turns=sum(len(turn.replies) < 2 for turn in turns),
        flagged_replies=sum(bool(reply.flags) for _, reply in replies),
        generation_failures=sum(count for count, _ in failures.values()),
        probes={
            kind: sum(probe.kind == kind for p in participants for probe in p.probes)
            for kind in KINDS
        },
        per_model=models,
        per_position={
            choice: sum(t.choice == choice for t in turns) for choice in ("A", "B", "tie")
        },
        **_people(participants, study),
    )


def _people(participants: list[ParticipantRow], study: Study) -> dict[str, Any]:
    """Each participant's state, minutes and careless signals, and the spread of the time."""
    followed = [participant_progress(p, study) for p in participants]
    return {
        "participants": followed,
        "careless": sum(p.careless for p in followed),
        "minutes_per_participant": spread(
            [minutes_spent(p) for p in participants if p.finished_at is not None]
        ),
        "minutes_per_turn": spread([m for p in participants for m in turn_minutes(p)]),
    }


def participant_progress(participant: ParticipantRow, study: Study) -> ParticipantProgress:
    return ParticipantProgress(
        id=participant.public_id,
        enrolment=participant.enrolment,
        state=state(participant, study),
        minutes=round(minutes_spent(participant), 2),
        turns=len(participant.turns),
        careless=careless(participant.careless_signals, study.quality),
        careless_signals=list(participant.careless_signals or ()),
    )
