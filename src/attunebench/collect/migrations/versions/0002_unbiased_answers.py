"""Answers without defaults and what the study needs to run safely: the before-replies need,
the post-hoc comment (was `wanted`), how a tie was continued, deletion codes, open enrolment,
rate limits shared by every app process, and generation failures per model.

Turns picked before this revision continued with the reply the participant chose, or on a tie
always with Reply A: `continued` says so, and `continued_by` stays empty for those ties, which
were neither picked nor drawn.

Created 2026-12-01."""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"

# Crockford's base 32: no I, L, O or U, so a code read aloud or copied by hand survives.
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_code() -> str:
    """Twelve characters (60 bits) in three groups; the same form as security.deletion_code."""
    raw = "".join(secrets.choice(ALPHABET) for _ in range(12))
    return f"{raw[:4]}-{raw[4:8]}-{raw[8:]}"


def upgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        batch.alter_column("wanted", new_column_name="comment")
        batch.alter_column("wanted_behaviors", new_column_name="comment_behaviors")
        batch.add_column(sa.Column("need_text", sa.Text(), nullable=True))
        batch.add_column(sa.Column("need_behaviors", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("continued", sa.String(1), nullable=True))
        batch.add_column(sa.Column("continued_by", sa.String(8), nullable=True))
    op.execute(
        "UPDATE turns SET continued = CASE WHEN choice = 'B' THEN 'B' ELSE 'A' END, "
        "continued_by = CASE WHEN choice = 'tie' THEN NULL ELSE 'pick' END "
        "WHERE choice IS NOT NULL"
    )
    with op.batch_alter_table("participants") as batch:
        batch.add_column(sa.Column("deletion_code", sa.String(16), nullable=True))
        batch.add_column(
            sa.Column("enrolment", sa.String(16), nullable=False, server_default="invitation")
        )
    connection = op.get_bind()
    for (row_id,) in connection.execute(sa.text("SELECT id FROM participants")).all():
        connection.execute(
            sa.text("UPDATE participants SET deletion_code = :code WHERE id = :id"),
            {"code": new_code(), "id": row_id},
        )
    with op.batch_alter_table("participants") as batch:
        batch.alter_column("deletion_code", existing_type=sa.String(16), nullable=False)
        batch.create_unique_constraint("uq_participants_deletion_code", ["deletion_code"])
    op.create_table(
        "rate_limits",
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("tat", sa.Float(), nullable=False),
    )
    op.create_table(
        "generation_failures",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_generation_failures_model", "generation_failures", ["model"])


def downgrade() -> None:
    op.drop_index("ix_generation_failures_model", "generation_failures")
    op.drop_table("generation_failures")
    op.drop_table("rate_limits")
    with op.batch_alter_table("participants") as batch:
        batch.drop_constraint("uq_participants_deletion_code", type_="unique")
        batch.drop_column("enrolment")
        batch.drop_column("deletion_code")
    with op.batch_alter_table("turns") as batch:
        batch.drop_column("continued_by")
        batch.drop_column("continued")
        batch.drop_column("need_behaviors")
        batch.drop_column("need_text")
        batch.alter_column("comment_behaviors", new_column_name="wanted_behaviors")
        batch.alter_column("comment", new_column_name="wanted")
