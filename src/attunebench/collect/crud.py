"""Reads and writes of the collection database. Callers own the transaction (db.read/db.write).

Writes that depend on a participant's current stage lock the participant row first, so two
concurrent posts for one participant apply one after the other (SQLite gets the same from
`BEGIN IMMEDIATE`).
"""

from __future__ import annotations

import functools
import json
import secrets
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Select, bindparam, delete, func, select
from sqlalchemy.orm import Session, aliased, joinedload, make_transient_to_detached, selectinload
from sqlalchemy.orm.attributes import set_committed_value

from attunebench.collect.assignment import Pair, choose_pair, continuation
from attunebench.collect.generation import Reply
from attunebench.collect.models import (
    AdminSession,
    GenerationFailure,
    Meta,
    ParticipantRow,
    PlatformIdentity,
    ReplyRow,
    StudyRow,
    TurnRow,
)
from attunebench.collect.schemas import JudgeAnswer, MessageAnswer
from attunebench.collect.security import deletion_code, new_token, token_hash
from attunebench.collect.study import Study

SECRET_KEY = "secret_key"
ADMIN_PASSWORD = "admin_password_hash"
JOIN_SLUG = "join_slug"
SERVED_AT = "served_at"  # where `collect serve` last listened: the links status and invite print
OPEN_ENROLMENTS = ("open", "simulated")


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
    stamp = now()
    if row is None:
        row = StudyRow(id=study.id, created_at=stamp)
        session.add(row)
    row.config, row.source, row.updated_at = study.model_dump_json(), source, stamp


def load_stored_study(session: Session) -> Study | None:
    row = session.scalar(select(StudyRow))
    return None if row is None else Study.model_validate(json.loads(row.config))


def get_meta(session: Session, key: str) -> str | None:
    row = session.get(Meta, key)
    return None if row is None else row.value


def set_meta(session: Session, key: str, value: str) -> None:
    session.merge(Meta(key=key, value=value))


def ensure_meta(session: Session, key: str) -> None:
    """A random value stored under `key` the first time, and kept from then on."""
    if get_meta(session, key) is None:
        set_meta(session, key, secrets.token_urlsafe(48 if key == SECRET_KEY else 12))


def add_participant(session: Session, enrolment: str) -> tuple[str, ParticipantRow]:
    """A new participant, and their token, which is shown once and never stored."""
    token = new_token()
    row = ParticipantRow(
        public_id="p" + secrets.token_hex(6),
        token_hash=token_hash(token),
        deletion_code=deletion_code(),
        enrolment=enrolment,
        created_at=now(),
    )
    session.add(row)
    return token, row


def create_invitations(session: Session, count: int) -> list[str]:
    return [add_participant(session, "invitation")[0] for _ in range(count)]


class AlreadyTookPartError(Exception):
    """The recruitment platform's account has arrived before (see platform.py)."""


@dataclass(frozen=True, slots=True)
class PlatformArrival:
    """What is kept of a platform's arrival: the keyed hash and the sealed identifiers."""

    account_hash: str
    sealed: str


def enrol_open(
    session: Session,
    study: Study,
    simulated: bool,
    arrival: PlatformArrival | None = None,
    screened_out: bool = False,
) -> str | None:
    """A participant through the open link, or None when the study's cap is reached;
    AlreadyTookPartError if the platform's account arrived before. A platform's arrival is kept
    even when screened out (the account cannot try again, and is paid), not counted to the cap."""
    session.scalar(select(StudyRow).with_for_update())  # concurrent joins count one by one
    if arrival is not None and account_known(session, arrival.account_hash):
        raise AlreadyTookPartError
    enrolled = session.scalar(
        select(func.count()).where(
            ParticipantRow.enrolment.in_(OPEN_ENROLMENTS),
            ParticipantRow.screened_out_at.is_(None),
        )
    )
    cap = study.enrolment.cap
    if not screened_out and cap is not None and (enrolled or 0) >= cap:
        return None
    token, row = add_participant(session, "simulated" if simulated else "open")
    if screened_out:
        row.screened_out_at = row.created_at
    if arrival is not None:
        row.platform_hash = arrival.account_hash
        session.flush()
        stamp = row.created_at
        session.add(
            PlatformIdentity(participant_id=row.id, sealed=arrival.sealed, created_at=stamp)
        )
    return token


def account_known(session: Session, account_hash: str) -> bool:
    found = session.scalar(select(ParticipantRow.id).filter_by(platform_hash=account_hash))
    return found is not None


def sealed_identities(session: Session) -> dict[int, str]:
    """Every platform arrival's sealed identifiers, by participant row id."""
    rows = session.execute(select(PlatformIdentity.participant_id, PlatformIdentity.sealed))
    return {participant: sealed for participant, sealed in rows}


def participant_by_token(
    session: Session, token: str, lock: bool = False, probes: bool = True
) -> ParticipantRow | None:
    """The participant with their whole conversation, in one joined query (every page view and
    answer needs it); their retest probes in a second one, unless `probes` is false (a study
    that asks nothing again has none: they then read as empty, with no query)."""
    query = _by_token_query(lock, probes)
    found = session.scalars(query, {"token_hash": token_hash(token)}).unique().one_or_none()
    if found is not None and not probes:
        set_committed_value(found, "probes", [])  # as loaded: nothing to ask for or write
    return found


@functools.cache
def _by_token_query(lock: bool, probes: bool) -> Select[ParticipantRow]:
    """participant_by_token's query, made once for each variant and then reused with the token's
    hash bound: every page view and answer runs it, and making the statement with its loader
    options (and its cache key, which a reused statement keeps) cost as much as running it."""
    query = (
        select(ParticipantRow)
        .where(ParticipantRow.token_hash == bindparam("token_hash"))
        .options(joinedload(ParticipantRow.turns).joinedload(TurnRow.replies))
    )
    if probes:
        query = query.options(selectinload(ParticipantRow.probes))
    if lock:
        query = query.with_for_update(of=ParticipantRow)
    return query


# Everything a participant gave, loaded with them (the export, the admin pages).
_WHOLE = (
    selectinload(ParticipantRow.turns).selectinload(TurnRow.replies),
    selectinload(ParticipantRow.probes),
)


def participant_by(session: Session, **column: str) -> ParticipantRow | None:
    """The participant whose column (public_id) holds the value, with all they gave."""
    return session.scalar(select(ParticipantRow).filter_by(**column).options(*_WHOLE))


def public_id_by(session: Session, **column: str) -> str | None:
    """The public id of the participant whose column (token_hash, deletion_code) holds the
    value, and nothing else of them: a lookup needs no conversation loaded."""
    return session.scalar(select(ParticipantRow.public_id).filter_by(**column))


def all_participants(session: Session) -> list[ParticipantRow]:
    query = select(ParticipantRow).order_by(ParticipantRow.created_at, ParticipantRow.id)
    return list(session.scalars(query.options(*_WHOLE)))


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


def save_traits(participant: ParticipantRow, traits: dict[str, Any]) -> None:
    participant.traits = {key: str(value) for key, value in traits.items()}
    participant.traits_at = now()


def add_turn(
    session: Session, participant: ParticipantRow, answer: MessageAnswer, safety_notice: bool
) -> TurnRow:
    """The participant's next turn, inserted by a statement of its own and put in the session
    as if loaded (the unit of work's flush, for one new row, cost more than the rest of the
    answer); the participant's turns then hold it, as the rest of the request reads them."""
    values: dict[str, Any] = {
        "participant_id": participant.id,
        "index": len(participant.turns),
        "user_text": answer.message,
        # As JSON reads back (lists, not tuples): the careless check compares it to stored turns.
        "state": answer.state.model_dump(mode="json", exclude_none=True, exclude_defaults=True),
        "need_text": answer.need_text,
        "need_behaviors": list(answer.need_behaviors) or None,
        "safety_notice": safety_notice,
        "created_at": now(),
    }
    turn_id = session.execute(_TURN_INSERT, values).scalar_one()
    # Every column given (none left to load), as a row just read holds them: the judgement's
    # columns are still empty.
    turn = TurnRow(**{**dict.fromkeys(_TURNS.c.keys()), **values, "id": turn_id})
    make_transient_to_detached(turn)
    session.add(turn)
    set_committed_value(turn, "replies", [])
    set_committed_value(turn, "participant", participant)
    set_committed_value(participant, "turns", [*participant.turns, turn])
    return turn


def store_pending_replies(
    session: Session, token: str, turn_index: int, replies: list[Reply]
) -> bool:
    """Store the replies of turn `turn_index` if it still waits for them (flow.where's PENDING);
    False, storing nothing, otherwise. Two statements, not a load of the whole conversation and a
    flush, which cost more than the rest of the stream's work."""
    found = session.execute(
        _pending_turn_query(), {"token_hash": token_hash(token), "turn": turn_index}
    )
    turn_id = found.scalar_one_or_none()
    if turn_id is None:
        return False
    stamp = now()
    rows = [{**asdict(reply), "turn_id": turn_id, "created_at": stamp} for reply in replies]
    session.execute(_REPLIES.insert(), rows)  # the table's, not the ORM's bulk insert
    return True


@functools.cache
def _pending_turn_query() -> Select[int]:
    """store_pending_replies' check, made once (see _by_token_query): the id of turn `turn` of
    the participant with `token_hash`, if it is their last and has fewer than two replies."""
    turns, later = aliased(TurnRow), aliased(TurnRow)
    replied = select(func.count(ReplyRow.id)).where(ReplyRow.turn_id == turns.id)
    query = (
        select(turns.id)
        .join(ParticipantRow, ParticipantRow.id == turns.participant_id)
        .where(
            ParticipantRow.token_hash == bindparam("token_hash"),
            turns.index == bindparam("turn"),
            ParticipantRow.declined_at.is_(None),
            ParticipantRow.finished_at.is_(None),
            ParticipantRow.left_at.is_(None),
            ParticipantRow.screened_out_at.is_(None),
            ~select(later.id)
            .where(later.participant_id == turns.participant_id, later.index > turns.index)
            .exists(),
            replied.scalar_subquery() < 2,
        )
    )
    return query.with_for_update(of=ParticipantRow)


def save_judgement(
    session: Session, participant: ParticipantRow, answer: JudgeAnswer, study: Study
) -> None:
    """The pick of the last turn and what was said of its replies, written by two statements,
    the loaded rows then holding the same values (see add_turn)."""
    turn = participant.turns[-1]
    values: dict[str, Any] = {
        "choice": answer.choice,
        "strength": answer.strength,
        "comment": answer.comment,
        "comment_behaviors": list(answer.comment_behaviors) or None,
        "picked_at": now(),
    }
    values["continued"], values["continued_by"] = continuation(
        study.assignment.seed, participant.public_id, turn.index, answer.choice
    )
    session.execute(_TURN_UPDATE, {"turn_id": turn.id, **values})
    rows = [
        {"reply_id": r.id, "behaviors": list(answer.behaviors.get(r.position, ()))}
        for r in turn.replies
    ]
    if rows:
        session.execute(_REPLY_BEHAVIORS_UPDATE, rows)
    for key, value in values.items():
        set_committed_value(turn, key, value)
    for reply, row in zip(turn.replies, rows, strict=True):
        set_committed_value(reply, "behaviors", row["behaviors"])


_TURNS: Any = TurnRow.__table__
_REPLIES: Any = ReplyRow.__table__


# The statements of every answer, made once (see _by_token_query).
_TURN_INSERT = _TURNS.insert().returning(_TURNS.c.id)  # the ratelimit's upsert needs it too
_TURN_UPDATE = _TURNS.update().where(_TURNS.c.id == bindparam("turn_id"))
_REPLY_BEHAVIORS_UPDATE = _REPLIES.update().where(_REPLIES.c.id == bindparam("reply_id"))


def delete_participant(session: Session, public_id: str) -> bool:
    """Erase a participant and everything they gave (on their request)."""
    result = session.execute(delete(ParticipantRow).where(ParticipantRow.public_id == public_id))
    return bool(getattr(result, "rowcount", 0))


def record_failures(session: Session, failures: dict[str, str]) -> None:
    """Keep why each model's reply could not be had (counted per model on the dashboard)."""
    stamp = now()
    for model, error in failures.items():
        session.add(GenerationFailure(model=model, error=error[:500], created_at=stamp))


def open_admin_session(session: Session, session_id: str, hours: float) -> None:
    session.execute(delete(AdminSession).where(AdminSession.expires_at < now()))
    expires = now() + timedelta(hours=hours)
    session.add(AdminSession(id_hash=token_hash(session_id), created_at=now(), expires_at=expires))


def admin_session_valid(session: Session, session_id: str) -> bool:
    row = session.get(AdminSession, token_hash(session_id))
    return row is not None and aware(row.expires_at) > now()


def close_admin_session(session: Session, session_id: str) -> None:
    session.execute(delete(AdminSession).where(AdminSession.id_hash == token_hash(session_id)))
