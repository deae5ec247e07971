"""The database: one engine per app, short transactions, schema by Alembic only.

SQLite runs in WAL mode with foreign keys on and full fsync, and write transactions start with
`BEGIN IMMEDIATE`: a deferred transaction that reads and then writes can fail at once with
"database is locked" when another writer got there first, whatever the busy timeout; taking the
write lock up front makes concurrent writers wait their turn instead. Writers that queued share
one commit (groupcommit.py): a write returns once its changes are on disk, as before, at one
fsync per group instead of one per write. PostgreSQL needs none of this; there, rows that must
not change under a request are locked with `SELECT ... FOR UPDATE`. Only `init` creates a
database, readable by its owner only (docs/collecting.md, "2. Set up the database").
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.orm import Session

from attunebench.collect.groupcommit import GroupCommit

SCRIPT_LOCATION = "attunebench.collect:migrations"
_WRITE = "attunebench_write"


class DatabaseError(RuntimeError):
    """The database cannot be opened; the message is one line naming it."""


class SchemaError(DatabaseError):
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


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for other databases and in-memory SQLite)."""
    parsed = make_url(normalise_url(url))
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(str(parsed.database))


def _create_private(path: Path) -> None:
    if not path.parent.is_dir():
        raise DatabaseError(f"cannot create {path}: folder {path.parent} does not exist")
    try:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(path, 0o600)  # also tightens a file an earlier version made world-readable
    except OSError as error:
        raise DatabaseError(f"cannot create {path}: {error.strerror}") from None


def open_engine(url: str, create: bool = False) -> Engine:
    """An engine on a database that answers; `create` makes a missing SQLite file (for init).
    Anything else is a one-line DatabaseError."""
    try:
        path = sqlite_file(url)
    except ArgumentError:
        forms = "sqlite:///file.db or postgresql://user:password@host/db"
        raise DatabaseError(f"{url!r} is not a database URL ({forms})") from None
    if path is not None and create:
        _create_private(path)
    elif path is not None and not path.is_file():
        raise DatabaseError(f"no database at {path}: check --db, or run `attunebench collect init`")
    try:
        engine = make_engine(url)
        with engine.connect():
            pass
    except (SQLAlchemyError, ImportError) as error:
        reason = " ".join(str(getattr(error, "orig", None) or error).split())
        shown = make_url(url).render_as_string(hide_password=True)  # parsed above, by sqlite_file
        raise DatabaseError(f"cannot open database {shown}: {reason}") from None
    return engine


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    return config


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration (the only way tables are made).

    On SQLite, foreign keys are off while migrating: a batch migration rebuilds a table by
    copying it and dropping the old one, and dropping a parent table with foreign keys on
    deletes its children by cascade. The keys are checked once the migration is done.
    """
    config = alembic_config()
    with engine.connect() as connection:
        refuse_other_tables(connection)
    with engine.connect() as connection:
        sqlite = engine.dialect.name == "sqlite"
        raw = connection.connection.driver_connection
        if sqlite:  # a pragma that must run outside any transaction
            raw.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        try:
            with connection.begin():
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
                if sqlite and connection.exec_driver_sql("PRAGMA foreign_key_check").first():
                    raise SchemaError("the migration left rows whose parent is missing")
        finally:
            if sqlite:
                raw.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]


def refuse_other_tables(connection: Connection) -> None:
    """A database that holds no study's schema but other tables (a run cache given for the
    study's, say) is not one to make tables in or read a study from."""
    if MigrationContext.configure(connection).get_current_revision() is not None:
        return
    tables = sorted(inspect(connection).get_table_names())
    if tables:
        raise SchemaError(
            f"this database holds no study but other tables ({', '.join(tables[:5])}): give "
            "the study's database, or a new file for `attunebench collect init`"
        )


def check_schema(engine: Engine) -> None:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    with engine.connect() as connection:
        refuse_other_tables(connection)
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
        self.is_sqlite = engine.dialect.name == "sqlite"
        self._writer = engine.execution_options(**{_WRITE: True})
        # SQLite has one writer at a time. Queueing writers on a lock (groupcommit.py) wakes
        # each one as soon as the last is done; left to SQLite's busy handler they would poll
        # with sleeps of up to 100 ms, which under load turns into seconds of tail latency.
        # (Other processes on the same file still meet the busy timeout.) The writers queued
        # share a commit.
        self._groups = GroupCommit(self._writer) if self.is_sqlite else None

    @contextmanager
    def read(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as session, session.begin():
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session committed when the block exits: once that returns, the changes are on disk."""
        if self._groups is not None:
            with self._groups.session() as session:
                yield session
            return
        with Session(self._writer, expire_on_commit=False) as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
