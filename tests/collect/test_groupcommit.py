"""SQLite's writers that queue share one commit (groupcommit.py), and a write is still durable
when it returns and all or nothing: a failed write leaves its group's others stored and keeps
nothing of its own; a failed commit fails every write of its group and stores none."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, event, select
from sqlalchemy.exc import OperationalError

from attunebench.collect.db import Database, make_engine, migrate
from attunebench.collect.models import Meta

WRITERS = 12


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    engine = make_engine(f"sqlite:///{tmp_path / 'study.db'}")
    migrate(engine)
    database = Database(engine)
    yield database
    database.dispose()


def _commits(database: Database) -> list[Connection]:
    """The write transactions' commits, as they come (reads commit too, and are left out)."""
    seen: list[Connection] = []

    def commit(connection: Connection) -> None:
        if connection.get_execution_options().get("attunebench_write"):
            seen.append(connection)

    event.listen(database.engine, "commit", commit)
    return seen


def _stored(database: Database) -> dict[str, str]:
    with database.read() as session:
        return {row.key: row.value for row in session.scalars(select(Meta))}


def _queued_behind(
    database: Database, first: Callable[[], None], others: list[str]
) -> dict[str, object]:
    """A writer "first" holds the writer's turn (after calling `first`) until the others are
    queued behind it. Each writes its key (those named "fails..." raise after writing) and,
    once `write()` returns, reads it back on a connection of its own. What each writer read or
    raised, by key."""
    holding, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def write(key: str) -> None:
        try:
            with database.write() as session:
                if key == "first":
                    first()
                    holding.set()
                    release.wait(10)
                session.add(Meta(key=key, value=key.upper()))
                if key.startswith("fails"):
                    session.flush()
                    raise ValueError(key)
            outcome[key] = _stored(database).get(key)  # acknowledged: stored, on disk
        except Exception as error:  # the test records what each writer got
            outcome[key] = error

    threads = [threading.Thread(target=write, args=("first",))]
    threads[0].start()
    holding.wait(10)
    threads += [threading.Thread(target=write, args=(key,)) for key in others]
    for thread in threads[1:]:
        thread.start()
    groups = database._groups  # released once every writer is queued
    assert groups is not None
    deadline = time.monotonic() + 10
    while groups._queued < len(others) and time.monotonic() < deadline:
        time.sleep(0.005)
    release.set()
    for thread in threads:
        thread.join(10)
    return outcome


def test_queued_writes_share_a_commit_and_each_is_stored_when_it_returns(
    database: Database,
) -> None:
    commits = _commits(database)
    keys = [f"k{n}" for n in range(WRITERS)]
    outcome = _queued_behind(database, lambda: None, keys)
    expected = {key: key.upper() for key in ["first", *keys]}
    assert outcome == expected
    assert _stored(database) == expected
    # The trap: a commit each (WRITERS + 1 of them) would be no grouping at all.
    assert len(commits) == 1


def test_a_failed_write_keeps_nothing_and_leaves_its_group_stored(database: Database) -> None:
    keys = ["a", "fails-1", "b", "fails-2", "c"]
    outcome = _queued_behind(database, lambda: None, keys)
    stored = {"first": "FIRST", "a": "A", "b": "B", "c": "C"}
    assert {key: outcome[key] for key in stored} == stored
    assert all(isinstance(outcome[key], ValueError) for key in ("fails-1", "fails-2"))
    assert _stored(database) == stored


def test_a_failed_commit_fails_every_write_of_its_group(database: Database) -> None:
    def refuse(_connection: object) -> None:
        raise OperationalError("COMMIT", {}, Exception("disk I/O error"))

    keys = [f"k{n}" for n in range(4)]
    outcome = _queued_behind(
        database, lambda: event.listen(database.engine, "commit", refuse), keys
    )
    assert all(isinstance(outcome[key], OperationalError) for key in ["first", *keys])
    event.remove(database.engine, "commit", refuse)
    assert _stored(database) == {}
    with database.write() as session:  # the next write has a transaction of its own
        session.add(Meta(key="after", value="1"))
    assert _stored(database) == {"after": "1"}


def test_a_lone_write_commits_at_once(database: Database) -> None:
    commits = _commits(database)
    with database.write() as session:
        session.add(Meta(key="alone", value="1"))
    assert len(commits) == 1
    assert _stored(database) == {"alone": "1"}
