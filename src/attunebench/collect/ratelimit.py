"""Rate limits held in the database, so every app process (`serve --workers N`) shares them.

Each key (a participant, a client address) keeps one number, its theoretical arrival time, as
in the generic cell rate algorithm (GCRA, ITU-T I.371): `limit` events may come at once, then
one every `window / limit` seconds. Checking and counting is a single conditional upsert, so
it is atomic on SQLite and PostgreSQL alike and costs one statement in the caller's
transaction. Clocks are wall clocks: processes on one machine (or synchronised ones) agree.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import case, delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from attunebench.collect.models import RateLimitRow

WINDOW_S = 60.0

_TABLE: Any = RateLimitRow.__table__


def allow(session: Session, key: str, limit: int, window_s: float = WINDOW_S) -> bool:
    """Count one event for `key` if it is within `limit` per `window_s`; False if not."""
    now = time.time()
    interval = window_s / limit
    start = case((_TABLE.c.tat > now, _TABLE.c.tat), else_=now)
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    statement = (
        insert(_TABLE)
        .values(key=key, tat=now + interval)
        .on_conflict_do_update(
            index_elements=[_TABLE.c.key],
            set_={"tat": start + interval},
            where=start - now <= window_s - interval,
        )
        .returning(_TABLE.c.tat)
    )
    return session.execute(statement).first() is not None


def forget_idle(session: Session) -> None:
    """Drop keys whose events are all in the past (their limits are back to full)."""
    session.execute(delete(RateLimitRow).where(RateLimitRow.tat < time.time()))
