"""The first schema: study, secrets, participants, turns, replies, admin sessions.

Created 2026-11-01."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None

_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "study",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("updated_at", _TS, nullable=False),
    )
    op.create_table(
        "meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )
    op.create_table(
        "participants",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("public_id", sa.String(32), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("consented_at", _TS, nullable=True),
        sa.Column("declined_at", _TS, nullable=True),
        sa.Column("traits", sa.JSON(), nullable=True),
        sa.Column("traits_at", _TS, nullable=True),
        sa.Column("model_first", sa.String(200), nullable=True),
        sa.Column("model_second", sa.String(200), nullable=True),
        sa.Column("ended_at", _TS, nullable=True),
        sa.Column("final_state", sa.JSON(), nullable=True),
        sa.Column("survey", sa.JSON(), nullable=True),
        sa.Column("finished_at", _TS, nullable=True),
    )
    op.create_table(
        "turns",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "participant_id",
            sa.Integer(),
            sa.ForeignKey("participants.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("user_text", sa.Text(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("safety_notice", sa.Boolean(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("choice", sa.String(8), nullable=True),
        sa.Column("strength", sa.Integer(), nullable=True),
        sa.Column("wanted", sa.Text(), nullable=True),
        sa.Column("wanted_behaviors", sa.JSON(), nullable=True),
        sa.Column("picked_at", _TS, nullable=True),
        sa.UniqueConstraint("participant_id", "index"),
    )
    op.create_index("ix_turns_participant_id", "turns", ["participant_id"])
    op.create_table(
        "replies",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "turn_id", sa.Integer(), sa.ForeignKey("turns.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("position", sa.String(1), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("behaviors", sa.JSON(), nullable=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.UniqueConstraint("turn_id", "position"),
    )
    op.create_index("ix_replies_turn_id", "replies", ["turn_id"])
    op.create_table(
        "admin_sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("expires_at", _TS, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("admin_sessions")
    op.drop_index("ix_replies_turn_id", "replies")
    op.drop_table("replies")
    op.drop_index("ix_turns_participant_id", "turns")
    op.drop_table("turns")
    op.drop_table("participants")
    op.drop_table("meta")
    op.drop_table("study")
