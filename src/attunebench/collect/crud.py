"""Reads and writes of the collection database. Callers own the transaction (db.read/db.write).

Writes that depend on a participant's current stage lock the participant row first, so two
concurrent posts for one participant apply one after the other (SQLite gets the same from
`BEGIN IMMEDIATE`).
"""

from __future__ import annotations

import secrets
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, joinedload, selectinload

from attunebench.collect.assignment import Pair, choose_pair
from attunebench.collect.models import (
    AdminSession,
    Meta,
    ParticipantRow,
    ReplyRow,
    StudyRow,
    TurnRow,
)
from attunebench.collect.schemas import JudgeAnswer, MessageAnswer, Progress, SurveyAnswer
from attunebench.collect.security import new_token, token_hash
from attunebench.collect.study import Study, study_from_json

SECRET_KEY = "secret_key"
ADMIN_PASSWORD = "admin_password_hash"


def now() -> datetime:
    return datetime.now(UTC)


def aware(moment: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; they were all written in UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class StudyMismatchError(ValueError):
    pass


def store_study(session: Session, study: Study, source: str) -> None:
    row = session.scalar(select(StudyRow))
    if row is not None and row.id != study.id:
        raise StudyMismatchError(
            f"this database collects for study {row.id!r}, not {study.id!r}; use another database"
        )
    if row is None:
        session.add(
            StudyRow(id=study.id, config=study.model_dump_json(), source=source,
                     created_at=now(), updated_at=now())
        )  # fmt: skip
        return
    row.config, row.source, row.updated_at = study.model_dump_json(), source, now()


def load_stored_study(session: Session) -> Study | None:
    row = session.scalar(select(StudyRow))
    return None if row is None else study_from_json(row.config)


def get_meta(session: Session, key: str) -> str | None:
    row = session.get(Meta, key)
    return None if row is None else row.value


def set_meta(session: Session, key: str, value: str) -> None:
    row = session.get(Meta, key)
    if row is None:
        session.add(Meta(key=key, value=value))
    else:
        row.value = value


def ensure_secret(session: Session) -> str:
    secret = get_meta(session, SECRET_KEY)
    if secret is None:
        secret = secrets.token_urlsafe(48)
        set_meta(session, SECRET_KEY, secret)
    return secret


def create_invitations(session: Session, count: int) -> list[str]:
    """New participants; returns their tokens, which are shown once and never stored."""
    tokens = [new_token() for _ in range(count)]
    for token in tokens:
        session.add(
            ParticipantRow(public_id="p" + secrets.token_hex(6), token_hash=token_hash(token),
                           created_at=now())
        )  # fmt: skip
    return tokens


def participant_by_token(
    session: Session, token: str, lock: bool = False
) -> ParticipantRow | None:
    # The whole conversation in one joined query: every page view and answer needs it.
    query = (
        select(ParticipantRow)
        .where(ParticipantRow.token_hash == token_hash(token))
        .options(joinedload(ParticipantRow.turns).joinedload(TurnRow.replies))
    )
    if lock:
        query = query.with_for_update(of=ParticipantRow)
    return session.scalars(query).unique().one_or_none()


def participant_by_public_id(session: Session, public_id: str) -> ParticipantRow | None:
    return session.scalar(select(ParticipantRow).where(ParticipantRow.public_id == public_id))


def all_participants(session: Session) -> list[ParticipantRow]:
    query = select(ParticipantRow).order_by(ParticipantRow.created_at, ParticipantRow.id)
    return list(
        session.scalars(
            query.options(selectinload(ParticipantRow.turns).selectinload(TurnRow.replies))
        )
    )


def consent(session: Session, participant: ParticipantRow, study: Study) -> None:
    # Lock the study row so concurrent consents see each other's assignments.
    session.scalar(select(StudyRow).with_for_update())
    rows = session.execute(
        select(ParticipantRow.model_first, ParticipantRow.model_second, func.count())
        .where(ParticipantRow.model_first.is_not(None))
        .group_by(ParticipantRow.model_first, ParticipantRow.model_second)
    ).all()
    used = Counter({Pair(a, b): n for a, b, n in rows if a in study.pool and b in study.pool})
    seed = study.assignment.seed * 1_000_003 + sum(used.values())
    pair = choose_pair(study.pool, used, seed=seed)
    participant.model_first, participant.model_second = pair.first, pair.second
    participant.consented_at = now()


def decline(participant: ParticipantRow) -> None:
    participant.declined_at = now()


def save_traits(participant: ParticipantRow, traits: dict[str, Any]) -> None:
    participant.traits = {key: str(value) for key, value in traits.items()}
    participant.traits_at = now()


def add_turn(
    session: Session, participant: ParticipantRow, answer: MessageAnswer, safety_notice: bool
) -> TurnRow:
    turn = TurnRow(
        index=len(participant.turns),
        user_text=answer.message,
        state=answer.state.model_dump(exclude_none=True),
        safety_notice=safety_notice,
        created_at=now(),
    )
    participant.turns.append(turn)
    session.flush()
    return turn


def add_reply(turn: TurnRow, position: str, model: str, text: str, flags: list[str],
              latency_ms: int) -> None:  # fmt: skip
    turn.replies.append(
        ReplyRow(position=position, model=model, text=text, flags=flags,
                 latency_ms=latency_ms, created_at=now())
    )  # fmt: skip


def save_judgement(turn: TurnRow, answer: JudgeAnswer) -> None:
    for reply in turn.replies:
        reply.behaviors = list(answer.behaviors.get(reply.position, ()))
    turn.choice = answer.choice
    turn.strength = answer.strength
    turn.wanted = answer.wanted
    turn.wanted_behaviors = list(answer.wanted_behaviors)
    turn.picked_at = now()


def end_conversation(participant: ParticipantRow) -> None:
    participant.ended_at = now()


def save_survey(participant: ParticipantRow, answer: SurveyAnswer) -> None:
    if answer.final_state is not None:
        participant.final_state = answer.final_state.model_dump(exclude_none=True)
    participant.survey = dict(answer.answers)
    participant.finished_at = now()


def delete_participant(session: Session, public_id: str) -> bool:
    """Erase a participant and everything they gave (on their request)."""
    result = session.execute(delete(ParticipantRow).where(ParticipantRow.public_id == public_id))
    return bool(getattr(result, "rowcount", 0))


def progress(session: Session, study: Study) -> Progress:
    participants = all_participants(session)
    per_model: defaultdict[str, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(("conversations", "shown", "chosen", "ties"), 0)
    )
    for spec in study.pool:
        per_model[spec]["conversations"] += 0
    per_position = {"A": 0, "B": 0, "tie": 0}
    turns = picked = flagged = 0
    for participant in participants:
        for model in (participant.model_first, participant.model_second):
            if model is not None:
                per_model[model]["conversations"] += 1
        for turn in participant.turns:
            turns += 1
            if turn.choice is not None:
                picked += 1
                per_position[turn.choice] += 1
            for reply in turn.replies:
                counts = per_model[reply.model]
                counts["shown"] += 1
                counts["chosen"] += turn.choice == reply.position
                counts["ties"] += turn.choice == "tie"
                flagged += bool(reply.flags)
    return Progress(
        study=study.id,
        invited=len(participants),
        consented=sum(p.consented_at is not None for p in participants),
        declined=sum(p.declined_at is not None for p in participants),
        started=sum(bool(p.turns) for p in participants),
        finished=sum(p.finished_at is not None for p in participants),
        turns=turns,
        picked_turns=picked,
        flagged_replies=flagged,
        per_model=dict(per_model),
        per_position=per_position,
    )


def open_admin_session(session: Session, session_id: str, hours: float) -> None:
    session.execute(delete(AdminSession).where(AdminSession.expires_at < now()))
    session.add(
        AdminSession(id_hash=token_hash(session_id), created_at=now(),
                     expires_at=now() + timedelta(hours=hours))
    )  # fmt: skip


def admin_session_valid(session: Session, session_id: str) -> bool:
    row = session.get(AdminSession, token_hash(session_id))
    return row is not None and aware(row.expires_at) > now()


def close_admin_session(session: Session, session_id: str) -> None:
    session.execute(delete(AdminSession).where(AdminSession.id_hash == token_hash(session_id)))
