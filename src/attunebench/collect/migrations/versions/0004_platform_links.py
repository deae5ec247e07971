"""Recruitment-platform links: a keyed hash of the platform's participant identifier with the
participant (a second arrival of the same account is refused), the identifiers themselves
encrypted in a table of their own (read only by `collect export --payments`), and when a
participant was screened out at the door or left through the support page.

Created 2026-12-05."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.add_column(sa.Column("platform_hash", sa.String(64), nullable=True))
        batch.add_column(sa.Column("screened_out_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("left_at", sa.DateTime(timezone=True), nullable=True))
        batch.create_unique_constraint("uq_participants_platform_hash", ["platform_hash"])
    op.create_table(
        "platform_identities",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "participant_id",
            sa.Integer(),
            sa.ForeignKey("participants.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("sealed", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("participant_id"),
    )


def downgrade() -> None:
    op.drop_table("platform_identities")
    with op.batch_alter_table("participants") as batch:
        batch.drop_constraint("uq_participants_platform_hash", type_="unique")
        batch.drop_column("left_at")
        batch.drop_column("screened_out_at")
        batch.drop_column("platform_hash")
