"""SQLite's write transactions, committed in groups: one fsync for the writes that queued up
while the last one was being written.

SQLite has one writer at a time, and with `synchronous=FULL` every commit waits for the disk
(about 4 ms on a virtual disk), which is most of what a short answer's transaction costs: left
one commit per transaction, the writer's lock is held mostly by fsync and writes queue behind
it. Here, the writers queued on the lock run one after another inside one transaction, each in
a savepoint of its own, and the last of them (the one that finds nobody queued behind it, or
the one that fills the group) commits for all. A write is as durable as before, and still all
or nothing (docs/collecting.md, "3. Serve"): no `write()` returns before the commit holding it
is on disk, a failed write is rolled back to its savepoint alone, and a failed commit fails
every write of its group. Writes that queue see the changes of those before them in the group,
as they would had each committed on its own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, RootTransaction
from sqlalchemy.orm import Session

GROUP_MAX = 32  # writes one commit carries at most: bounds what the group's first one waits


@dataclass
class _Group:
    """One outer transaction and what its writers wait for."""

    connection: Connection
    transaction: RootTransaction
    written: int = 0  # writes whose savepoints were released into the transaction
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


class GroupCommit:
    """Write sessions on `engine`, one at a time, committed in groups (see the module)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()  # one writer inside the transaction at a time
        self._counting = threading.Lock()
        self._queued = 0  # writers waiting for _lock
        self._group: _Group | None = None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose changes are committed (and on disk) when the block exits."""
        with self._counting:
            self._queued += 1
        with self._lock:
            with self._counting:
                self._queued -= 1
            group = self._group or self._open()
            try:
                with (
                    Session(
                        group.connection,
                        expire_on_commit=False,
                        join_transaction_mode="create_savepoint",
                    ) as session,
                    session.begin(),
                ):
                    yield session
                group.written += 1
            finally:
                if self._queued == 0 or group.written >= GROUP_MAX:
                    self._close(group)
        group.done.wait()
        if group.error is not None:
            raise group.error

    def _open(self) -> _Group:
        connection = self._engine.connect()
        self._group = _Group(connection, connection.begin())
        return self._group

    def _close(self, group: _Group) -> None:
        """Commit the group (roll it back if it holds no write), then wake its writers."""
        self._group = None
        try:
            if group.written:
                group.transaction.commit()
            else:
                group.transaction.rollback()
        except BaseException as error:  # every writer of the group raises it, none acknowledged
            group.error = error
            # A connection whose commit failed may still be inside its transaction, holding
            # the write lock: it is closed, never handed back to the pool.
            group.connection.invalidate()
        finally:
            group.connection.close()
            group.done.set()
