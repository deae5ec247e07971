"""The database: one engine per app, short transactions, schema by Alembic only.

SQLite runs in WAL mode with foreign keys on and full fsync, and write transactions start with
`BEGIN IMMEDIATE`: a deferred transaction that reads and then writes can fail at once with
"database is locked" when another writer got there first, whatever the busy timeout; taking the
write lock up front makes concurrent writers wait their turn instead. PostgreSQL needs none of
this; there, rows that must not change under a request are locked with `SELECT ... FOR UPDATE`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

SCRIPT_LOCATION = "attunebench.collect:migrations"
_WRITE = "attunebench_write"


class SchemaError(RuntimeError):
    """The database has not been initialised, or is at another schema version."""


def normalise_url(url: str) -> str:
    """Plain `postgresql://` URLs go through psycopg 3, the driver this package ships with."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url.removeprefix(prefix)
    return url


def _sqlite_pragmas(dbapi_connection: Any, _record: object) -> None:
    # Let SQLAlchemy's `begin` hook issue BEGIN itself, instead of pysqlite's implicit one.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    for pragma in ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=30000", "synchronous=FULL"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_begin(connection: Any) -> None:
    immediate = connection.get_execution_options().get(_WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    if make_url(url).get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    return config


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration (the only way tables are made)."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def check_schema(engine: Engine) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    with engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    if current != head:
        raise SchemaError(
            f"database schema is at {current or 'nothing'}, expected {head}: "
            "run `attunebench collect init` first"
        )


class Database:
    """Sessions for one engine: `read()` for pages, `write()` for answers (committed on exit)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._writer = engine.execution_options(**{_WRITE: True})
        # SQLite has one writer at a time. Queueing writers on a lock here wakes each one as soon
        # as the last commits; left to SQLite's busy handler they would poll with sleeps of up
        # to 100 ms, which under load turns into seconds of tail latency. (Other processes on
        # the same file still meet the busy timeout.)
        self._write_lock = threading.Lock() if self.is_sqlite else contextlib.nullcontext()

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextmanager
    def read(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        with self._write_lock, Session(self._writer, expire_on_commit=False) as session, (
            session.begin()
        ):
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
