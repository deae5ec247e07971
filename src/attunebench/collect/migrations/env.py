"""Alembic environment: runs on the connection the caller hands over (see db.migrate)."""

from __future__ import annotations

from alembic import context

from attunebench.collect.models import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `attunebench collect init` (db.migrate)")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    # SQLite cannot ALTER most things in place; batch mode rebuilds the table instead.
    render_as_batch=True,
)
with context.begin_transaction():
    context.run_migrations()
