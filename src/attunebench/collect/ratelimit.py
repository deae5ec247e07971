"""Rate limits held in the database, so every app process (`serve --workers N`) shares them.

Each key (a participant, a client address) keeps one number, its theoretical arrival time, as
in the generic cell rate algorithm (GCRA, ITU-T I.371): `limit` events may come at once, then
one every `window / limit` seconds. Checking and counting is a single conditional upsert, so
it is atomic on SQLite and PostgreSQL alike and costs one statement in the caller's
transaction. Clocks are wall clocks: processes on one machine (or synchronised ones) agree.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from sqlalchemy import Float, bindparam, case, delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from attunebench.collect.models import RateLimitRow

WINDOW_S = 60.0

_TABLE: Any = RateLimitRow.__table__


def allow(session: Session, key: str, limit: int, events: int = 1) -> bool:
    """Count `events` events for `key` if they are within `limit` per WINDOW_S; False if not."""
    upsert = _upsert(session.get_bind().dialect.name)
    interval = events * WINDOW_S / limit  # n events take n intervals of the allowance
    values = {"rate_key": key, "now": time.time(), "interval": interval, "window": WINDOW_S}
    return session.execute(upsert, values).first() is not None


@functools.cache
def _upsert(dialect: str) -> Any:
    """The check-and-count statement, made once per dialect and reused with its values bound:
    every answer runs it, and making it cost more than running it."""
    now, interval = bindparam("now", type_=Float), bindparam("interval", type_=Float)
    window = bindparam("window", type_=Float)
    start = case((_TABLE.c.tat > now, _TABLE.c.tat), else_=now)
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return (
        insert(_TABLE)
        .values(key=bindparam("rate_key"), tat=now + interval)
        .on_conflict_do_update(
            index_elements=[_TABLE.c.key],
            set_={"tat": start + interval},
            where=start - now <= window - interval,
        )
        .returning(_TABLE.c.tat)
    )


def forget_idle(session: Session) -> None:
    """Drop keys whose events are all in the past (their limits are back to full)."""
    session.execute(delete(RateLimitRow).where(RateLimitRow.tat < time.time()))
