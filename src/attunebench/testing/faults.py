"""Which request fails how: a seeded, order-free fault plan, and the counts a fault server keeps.

Whether the n-th attempt of a request (known by its content key) fails, and how, is a hash of
(seed, key, n), so a plan gives the same faults however calls interleave, in whatever process,
and a resumed run meets the faults the interrupted one would have. Transient faults stop after
`max_faults_per_request` attempts; `permanent_rate` picks requests refused on every attempt.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

FaultKind = Literal[
    "rate_limit", "server_error", "unavailable", "timeout", "disconnect", "malformed", "truncated"
]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)


@dataclass(frozen=True, slots=True)
class FaultPlan:
    fail_rate: float = 0.3  # share of first attempts that fail (and of each retry, up to the cap)
    seed: int = 0
    kinds: tuple[FaultKind, ...] = FAULT_KINDS
    max_faults_per_request: int = 2  # transient: attempt number this many always succeeds
    permanent_rate: float = 0.0  # share of requests refused on every attempt
    permanent_status: int = 400
    permanent_models: tuple[str, ...] = ()  # refuse only requests naming these models (or any)
    retry_after_s: float = 0.0  # the Retry-After a 429 carries
    timeout_s: float = 1.0  # how long a `timeout` holds the request before dropping it

    def __post_init__(self) -> None:
        if not 0 <= self.fail_rate <= 1 or not 0 <= self.permanent_rate <= 1:
            raise ValueError("fail_rate and permanent_rate are shares between 0 and 1")
        unknown = set(self.kinds) - set(FAULT_KINDS)
        if unknown or not self.kinds:
            raise ValueError(f"fault kinds must be some of {', '.join(FAULT_KINDS)}")

    def _unit(self, *parts: object) -> float:
        digest = hashlib.sha256("|".join(map(str, (self.seed, *parts))).encode()).digest()
        return int.from_bytes(digest[:8]) / 2**64

    def is_permanent(self, key: str, model: str = "") -> bool:
        if self.permanent_models and model not in self.permanent_models:
            return False
        return self._unit("permanent", key) < self.permanent_rate

    def fault(self, key: str, attempt: int) -> FaultKind | None:
        """The fault for attempt number `attempt` (from 0) of the request `key`, if any."""
        if attempt >= self.max_faults_per_request or self._unit("fail", key, attempt) >= (
            self.fail_rate
        ):
            return None
        return self.kinds[int(self._unit("kind", key, attempt) * len(self.kinds))]


@dataclass(slots=True)
class FaultCounts:
    """What a fault server saw and did. Mutated only on the server's event loop."""

    requests: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    refused: int = 0  # permanent failures answered
    attempts: Counter[str] = field(default_factory=Counter)  # per request key
    successes: Counter[str] = field(default_factory=Counter)  # per request key

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able copy (the shape of GET /fault/stats)."""
        return {
            **counts_json(self, leave_out={"attempts"}),
            "faults_injected": sum(self.faults.values()),
            # attempts after a call's first: retries after faults, re-sends after a kill
            "retried_requests": sum(n - 1 for n in self.attempts.values()),
            "successful_calls": sum(self.successes.values()),
            "repeated_successful_calls": repeated(self.successes),
        }


def counts_json(counts: Any, leave_out: set[str] | None = None) -> dict[str, Any]:
    """A test server's counts dataclass as JSON: each field as it is, a Counter as a dict."""
    return {
        f.name: dict(value) if isinstance(value := getattr(counts, f.name), Counter) else value
        for f in fields(counts)
        if f.name not in (leave_out or set())
    }


def repeated(successes: Counter[str], baseline: Counter[str] | None = None) -> int:
    """Successful calls beyond the first of each key (or beyond `baseline`'s count of it)."""
    base = baseline or Counter()
    return sum(max(0, n - max(1, base[key])) for key, n in successes.items())
