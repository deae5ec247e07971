"""Database tables (SQLAlchemy 2 typed mappings). Request and response shapes live in schemas.py.

The schema is created and changed only by the Alembic migrations in `migrations/`; these classes
must stay in step with them (a test compares the two).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    DateTime,
    Float,
    ForeignKey,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    MappedColumn,
    Relationship,
    mapped_column,
    relationship,
)


class Base(DeclarativeBase):
    # A plain `str` is unbounded text; a column with a length says so (String(n)).
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        str: Text,
        dict[str, Any]: JSON,
        list[Any]: JSON,
        datetime: DateTime(timezone=True),
    }


def _children(back_populates: str, order_by: str) -> Relationship[Any]:
    """A parent's rows in a child table, in order. The database deletes them with the parent
    (ON DELETE CASCADE), so the session need not load them to do it (passive)."""
    return relationship(
        back_populates=back_populates,
        order_by=order_by,
        cascade="all, delete-orphan",
        passive_deletes=True,
    )


def _parent_id(table: str) -> MappedColumn[Any]:
    """A child row's link to its parent row, deleted with it."""
    return mapped_column(ForeignKey(f"{table}.id", ondelete="CASCADE"), index=True)


class StudyRow(Base):
    """The one study this database collects for, as validated JSON and its TOML source."""

    __tablename__ = "study"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    config: Mapped[str]
    source: Mapped[str]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Meta(Base):
    """Deployment secrets set at init: the signing key and the admin password hash."""

    __tablename__ = "meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str]


class ParticipantRow(Base):
    __tablename__ = "participants"

    id: Mapped[int] = mapped_column(primary_key=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True)
    # Only a hash of the invitation token is kept, so the table does not hand out live links.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # Shown on the thank-you page; a participant quotes it to have their answers deleted.
    deletion_code: Mapped[str] = mapped_column(String(16), unique=True)
    # "invitation", "open" (the open link) or "simulated" (`collect simulate`, via the open link).
    enrolment: Mapped[str] = mapped_column(String(16), server_default="invitation")
    created_at: Mapped[datetime]
    consented_at: Mapped[datetime | None]
    declined_at: Mapped[datetime | None]
    traits: Mapped[dict[str, Any] | None]
    traits_at: Mapped[datetime | None]
    model_first: Mapped[str | None] = mapped_column(String(200))
    model_second: Mapped[str | None] = mapped_column(String(200))
    ended_at: Mapped[datetime | None]
    final_state: Mapped[dict[str, Any] | None]
    survey: Mapped[dict[str, Any] | None]
    finished_at: Mapped[datetime | None]
    # A recruitment platform's arrivals: a keyed hash of the platform's participant identifier
    # (a second arrival of the same account is refused), the identifier itself sealed in
    # `platform_identities`; screened out at the door, or left through the support page.
    platform_hash: Mapped[str | None] = mapped_column(String(64), unique=True)
    screened_out_at: Mapped[datetime | None]
    left_at: Mapped[datetime | None]
    # The careless signals that hold so far (quality.py), recomputed with every answer.
    careless_signals: Mapped[list[Any] | None]

    turns: Mapped[list[TurnRow]] = _children("participant", order_by="TurnRow.index")
    probes: Mapped[list[ProbeRow]] = _children("participant", order_by="ProbeRow.turn_index")


class TurnRow(Base):
    __tablename__ = "turns"
    __table_args__ = (UniqueConstraint("participant_id", "index"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    participant_id: Mapped[int] = _parent_id("participants")
    index: Mapped[int]
    user_text: Mapped[str]
    state: Mapped[dict[str, Any]]
    safety_notice: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime]
    # Asked with the message, before any reply is shown.
    need_text: Mapped[str | None]
    need_behaviors: Mapped[list[Any] | None]
    choice: Mapped[str | None] = mapped_column(String(8))
    strength: Mapped[int | None]
    # Written after reading the replies.
    comment: Mapped[str | None]
    comment_behaviors: Mapped[list[Any] | None]
    # The position the conversation went on with, and how it was chosen ("pick", "random").
    continued: Mapped[str | None] = mapped_column(String(1))
    continued_by: Mapped[str | None] = mapped_column(String(8))
    picked_at: Mapped[datetime | None]

    participant: Mapped[ParticipantRow] = relationship(back_populates="turns")
    replies: Mapped[list[ReplyRow]] = _children("turn", order_by="ReplyRow.position")


class ReplyRow(Base):
    __tablename__ = "replies"
    __table_args__ = (UniqueConstraint("turn_id", "position"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    turn_id: Mapped[int] = _parent_id("turns")
    position: Mapped[str] = mapped_column(String(1))
    model: Mapped[str] = mapped_column(String(200))
    text: Mapped[str]
    flags: Mapped[list[Any]]
    latency_ms: Mapped[int]
    behaviors: Mapped[list[Any] | None]
    created_at: Mapped[datetime]

    turn: Mapped[TurnRow] = relationship(back_populates="replies")


class ProbeRow(Base):
    """A question asked again later in the session (a retest probe), with its answer: the
    emotion check on turn `turn_index`'s message (`state`), or the pick between its replies,
    shown in the swapped order (`choice`, in the turn's own positions). Never gold."""

    __tablename__ = "probes"
    __table_args__ = (UniqueConstraint("participant_id", "turn_index"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    participant_id: Mapped[int] = _parent_id("participants")
    turn_index: Mapped[int]
    # The last turn the participant had completed when it was asked.
    asked_after: Mapped[int]
    kind: Mapped[str] = mapped_column(String(16))  # "state" or "pick"
    state: Mapped[dict[str, Any] | None]
    choice: Mapped[str | None] = mapped_column(String(8))
    created_at: Mapped[datetime]

    participant: Mapped[ParticipantRow] = relationship(back_populates="probes")


class PlatformIdentity(Base):
    """The identifiers a recruitment platform gave a participant, encrypted under the study's
    secret: only `collect export --payments` opens them. Deleted with the participant."""

    __tablename__ = "platform_identities"
    __table_args__ = (UniqueConstraint("participant_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    participant_id: Mapped[int] = mapped_column(ForeignKey("participants.id", ondelete="CASCADE"))
    sealed: Mapped[str]
    created_at: Mapped[datetime]


class AdminSession(Base):
    __tablename__ = "admin_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]


class RateLimitRow(Base):
    """One rate-limited key (a participant, a client address) and its theoretical arrival time
    (GCRA), shared by every app process."""

    __tablename__ = "rate_limits"

    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    tat: Mapped[float] = mapped_column(Float)


class GenerationFailure(Base):
    """A reply that could not be had, kept so an operator sees a failing model at once."""

    __tablename__ = "generation_failures"

    id: Mapped[int] = mapped_column(primary_key=True)
    model: Mapped[str] = mapped_column(String(200), index=True)
    error: Mapped[str]
    created_at: Mapped[datetime]
