"""Bounded retries through the whole engine: success after retries, recorded failures,
Retry-After obeyed, non-retryable errors failing at once."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable

import pytest
from engine_harness import RunFn

from attunebench.engine import RetryPolicy, read_ledger, read_records
from attunebench.models import MockProvider, ProviderError

Sleep = Callable[[float], Awaitable[None]]
KEY = "echo|c1|2|reply|"


def busy(retry_after: float | None = None) -> ProviderError:
    return ProviderError("overloaded", retryable=True, status=503, retry_after_s=retry_after)


async def test_retries_then_success(run_echo: RunFn, fast_sleep: tuple[list[float], Sleep]) -> None:
    waits, sleep = fast_sleep
    mock = MockProvider(failures={KEY: [busy(), busy()]})
    result = await run_echo({"m": mock}, sleep=sleep)
    records = {r.key[2:4]: r for r in read_records(result.rundir / "records.jsonl")}
    assert all(r.status == "ok" for r in records.values())
    assert mock.calls_by_key[KEY] == 3 and len(waits) == 2
    ledger = read_ledger(result.rundir)
    assert ledger is not None
    entry = ledger.entries[0]
    assert (entry.calls, entry.retries, entry.failures) == (12, 2, 0)


async def test_bounded_retries_end_in_a_failed_record_never_scored(
    run_echo: RunFn, fast_sleep: tuple[list[float], Sleep]
) -> None:
    waits, sleep = fast_sleep
    mock = MockProvider(failures={KEY: [busy()] * 10})
    result = await run_echo({"m": mock}, sleep=sleep, policy=RetryPolicy(max_attempts=4))
    failed = [r for r in read_records(result.rundir / "records.jsonl") if r.status == "failed"]
    assert len(failed) == 1 and failed[0].key[2:4] == ("c1", 2)
    assert failed[0].score is None and failed[0].scores == {}  # the task claimed 1.0
    assert "overloaded" in (failed[0].error or "") and "after 4 attempts" in (failed[0].error or "")
    assert mock.calls_by_key[KEY] == 4 and len(waits) == 3
    assert not result.complete and result.failed == 1


async def test_non_retryable_errors_fail_at_once(
    run_echo: RunFn, fast_sleep: tuple[list[float], Sleep]
) -> None:
    waits, sleep = fast_sleep
    bad = ProviderError("bad request", retryable=False, status=400)
    mock = MockProvider(failures={KEY: [bad, None]})
    result = await run_echo({"m": mock}, sleep=sleep)
    assert mock.calls_by_key[KEY] == 1 and waits == []
    assert result.failed == 1


async def test_retry_after_is_honoured(
    run_echo: RunFn, fast_sleep: tuple[list[float], Sleep]
) -> None:
    waits, sleep = fast_sleep
    mock = MockProvider(failures={KEY: [busy(retry_after=7.5), busy(retry_after=0.25)]})
    await run_echo({"m": mock}, sleep=sleep)
    assert waits == [7.5, 0.25]


def test_backoff_grows_is_jittered_and_capped() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
    rng = random.Random(1)
    error = busy()
    for retry, cap in [(0, 1.0), (1, 2.0), (2, 4.0), (5, 5.0)]:
        delays = [policy.delay_s(retry, error, rng) for _ in range(200)]
        assert all(0 <= d <= cap for d in delays)
        assert max(delays) > 0.8 * cap  # full jitter spreads over the whole range
    assert RetryPolicy(max_retry_after_s=60).delay_s(0, busy(retry_after=900), rng) == 60


@pytest.mark.parametrize("attempts", [1, 2])
async def test_policy_bounds_attempts(
    run_echo: RunFn, fast_sleep: tuple[list[float], Sleep], attempts: int
) -> None:
    _, sleep = fast_sleep
    mock = MockProvider(failures={KEY: [busy()] * 5})
    await run_echo({"m": mock}, sleep=sleep, policy=RetryPolicy(max_attempts=attempts))
    assert mock.calls_by_key[KEY] == attempts
