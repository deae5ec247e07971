"""Careless participation: the signals that hold for each participant (quality.py), recomputed
with every answer they give.

Created 2026-12-05."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.add_column(sa.Column("careless_signals", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.drop_column("careless_signals")
