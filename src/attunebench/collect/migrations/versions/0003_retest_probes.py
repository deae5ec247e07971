"""Retest probes: questions asked again later in the same session, with their answers.

Created 2026-12-04."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "probes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "participant_id",
            sa.Integer(),
            sa.ForeignKey("participants.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("turn_index", sa.Integer(), nullable=False),
        sa.Column("asked_after", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("state", sa.JSON(), nullable=True),
        sa.Column("choice", sa.String(8), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("participant_id", "turn_index"),
    )
    op.create_index("ix_probes_participant_id", "probes", ["participant_id"])


def downgrade() -> None:
    op.drop_index("ix_probes_participant_id", "probes")
    op.drop_table("probes")
