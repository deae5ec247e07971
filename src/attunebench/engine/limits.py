"""Pacing per endpoint: how many calls may be in flight, and how many may start per second.

Models served by the same servers share one `Endpoint`, so a subject and a judge on one
llama.cpp server never overload it together. A call holds its slot only while it is on the
wire, never while it backs off.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from attunebench.engine.retry import Sleep


class RateLimiter:
    """Starts at most `per_second` calls a second, evenly spaced (no bursts)."""

    def __init__(self, per_second: float, sleep: Sleep = asyncio.sleep) -> None:
        self._interval = 1.0 / per_second
        self._next = 0.0
        self._sleep = sleep

    async def wait(self) -> None:
        now = time.monotonic()
        start = max(now, self._next)
        self._next = start + self._interval  # reserve the slot before sleeping: no races
        if start > now:
            await self._sleep(start - now)


class Endpoint:
    def __init__(self, name: str, concurrency: int, rate_limit: float | None = None) -> None:
        self.name = name
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self._rate = RateLimiter(rate_limit) if rate_limit else None
        self.in_flight = 0
        self.peak_in_flight = 0

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        async with self._slots:
            if self._rate is not None:
                await self._rate.wait()
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1
