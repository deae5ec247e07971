"""Calls paced by an output-token rate limit, as Anthropic's response headers announce it.

Anthropic reserves a request's `max_tokens` against the output tokens per minute when it
starts, and answers 429 when it does not fit; every response carries the limit and what
remains. Room is what the last headers said remained, plus what has refilled since, less what
this provider reserved since (calls the server may not have counted yet), so a call that would
earn a 429 waits its turn instead, and each answer wakes the waiting."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

RATE_FIX: Final = (
    "a lower params.effort (or no thinking), a lower concurrency, or batch = true "
    "(Message Batches are not paced by it)"
)
LIMIT_HEADER: Final = "anthropic-ratelimit-output-tokens-limit"
REMAINING_HEADER: Final = "anthropic-ratelimit-output-tokens-remaining"


@dataclass(frozen=True, slots=True)
class OutputLimit:
    per_minute: int
    remaining: int


def _number(headers: Mapping[str, str], name: str) -> int | None:
    value = {k.lower(): v for k, v in headers.items()}.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def read_limit(headers: Mapping[str, str]) -> OutputLimit | None:
    """The output-token limit the headers announce, if they announce one.

    >>> read_limit({"anthropic-ratelimit-output-tokens-limit": "8000",
    ...             "anthropic-ratelimit-output-tokens-remaining": "7600"})
    OutputLimit(per_minute=8000, remaining=7600)
    """
    limit = _number(headers, LIMIT_HEADER)
    if limit is None or limit <= 0:
        return None
    remaining = _number(headers, REMAINING_HEADER)
    return OutputLimit(limit, limit if remaining is None else max(0, remaining))


class OutputPacer:
    """Waits for room under the announced limit; lets everything through until one is seen."""

    def __init__(self) -> None:
        self.limit: OutputLimit | None = None
        self._room = 0.0  # at `_since`, with the open reservations taken out
        self._since = 0.0
        self._tickets = itertools.count(1)
        self._open: dict[int, int] = {}  # ticket -> tokens, calls not yet answered
        self._wake: asyncio.Event | None = None

    async def reserve(self, tokens: int) -> int:
        """Wait until `tokens` fit (one that never can goes at once); the ticket to `settle`."""
        while self.limit is not None:
            per_minute, now = self.limit.per_minute, time.monotonic()
            room = min(float(per_minute), self._room + per_minute / 60.0 * (now - self._since))
            if room >= tokens or tokens > per_minute:
                self._room, self._since = room - tokens, now
                break
            if self._wake is None:
                self._wake = asyncio.Event()
            with contextlib.suppress(TimeoutError):  # refilled by then, or woken by an answer
                await asyncio.wait_for(self._wake.wait(), (tokens - room) * 60.0 / per_minute)
        ticket = next(self._tickets)
        self._open[ticket] = tokens
        return ticket

    def settle(self, ticket: int, headers: Mapping[str, str]) -> None:
        """The call `ticket` was answered with `headers` (none: it never reached the server)."""
        self._open.pop(ticket, None)
        found = read_limit(headers)
        if found is None:
            return
        since = sum(tokens for later, tokens in self._open.items() if later > ticket)
        self.limit = found
        self._room, self._since = float(found.remaining - since), time.monotonic()
        if self._wake is not None:
            self._wake.set()
            self._wake = None


def asked_for(asked: int, answer: int) -> str:
    """A call's budget, said in a stop line.

    >>> asked_for(16_300, 300)
    'max_tokens 16,300 (16,000 of them for thinking)'
    """
    thinking = asked - answer
    return f"max_tokens {asked:,}" + (f" ({thinking:,} of them for thinking)" if thinking else "")


def over_rate_limit(limit: OutputLimit | None, asked: int, answer: int) -> str | None:
    """Why a call asking for `asked` tokens can never start: over a minute's limit."""
    if limit is None or asked <= limit.per_minute:
        return None
    return (
        f"a call asks for {asked_for(asked, answer)}, more than the account's output-token "
        f"rate limit of {limit.per_minute:,} a minute (Anthropic reserves max_tokens when a "
        f"request starts); fix its models-file entry: {RATE_FIX}"
    )


def pacing_note(limit: OutputLimit | None, asked: int, concurrency: int) -> str | None:
    """What to say when `concurrency` calls of `asked` tokens at once pass the limit.

    >>> pacing_note(OutputLimit(8_000, 8_000), 512, 16)[:47]
    '16 calls at once of up to 512 output tokens pas'
    """
    if limit is None or asked * concurrency <= limit.per_minute:
        return None
    return (
        f"{concurrency} calls at once of up to {asked:,} output tokens pass the output-token "
        f"rate limit of {limit.per_minute:,} a minute: calls wait for room, paced by the "
        f"rate-limit headers; to go faster: {RATE_FIX}"
    )
