"""Bounded retries: exponential backoff with full jitter, and the server's wait obeyed
(`retry-after-ms`, else `Retry-After`).

Only a `ProviderError` marked retryable (429, 5xx, timeouts, disconnects, malformed bodies) is
tried again, at most `max_attempts` times in all; 400, 401 and 404 fail at once.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from attunebench.models.base import ProviderError

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_retry_after_s: float = 300.0  # a server asking for longer than this is treated as down

    def delay_s(self, retry: int, error: ProviderError, rng: random.Random) -> float:
        """How long to wait before retry number `retry` (0 for the first retry)."""
        if error.retry_after_s is not None:
            return min(error.retry_after_s, self.max_retry_after_s)
        # Full jitter (AWS architecture blog, "Exponential Backoff and Jitter", 2015): spreads
        # the retries of many concurrent callers instead of synchronising them.
        return rng.uniform(0, min(self.max_delay_s, self.base_delay_s * 2**retry))


class RetriesExhausted(Exception):
    """The last error, after `attempts` tries."""

    def __init__(self, error: ProviderError, attempts: int) -> None:
        super().__init__(f"{error} (after {attempts} attempt{'s' if attempts > 1 else ''})")
        self.error = error
        self.attempts = attempts


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Sleep,
    rng: random.Random,
    on_retry: Callable[[], None],
) -> T:
    """Run `attempt` until it succeeds, fails for good, or runs out of tries."""
    for tried in range(1, policy.max_attempts + 1):
        try:
            return await attempt()
        except ProviderError as error:
            if not error.retryable or tried == policy.max_attempts:
                raise RetriesExhausted(error, tried) from error
            wait = policy.delay_s(tried - 1, error, rng)
            on_retry()
            await sleep(wait)
    raise AssertionError("unreachable: the loop returns or raises")
