"""Resume: a stopped or killed run picks up where it was, repeating no call that came back."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from engine_harness import RunFn, write_dataset
from killable_run import CONCURRENCY

from attunebench.engine import RetryPolicy, RunDirError, read_records, read_run_info
from attunebench.models import MockProvider, ProviderError
from attunebench.models.modelsfile import ModelEntry

HERE = Path(__file__).parent


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


async def test_a_cancelled_run_resumes_without_repeating_a_call(
    run_echo: RunFn, tmp_path: Path
) -> None:
    log = tmp_path / "calls.log"
    first = MockProvider(latency_s=0.005, call_log=log)
    judge = MockProvider("judge", latency_s=0.02)
    running = asyncio.create_task(run_echo({"m": first}, judges={"j": judge}, concurrency=2))
    records = tmp_path / "run" / "records.jsonl"
    # Stop while an item is half done: its model call answered, its judge call in flight.
    while lines(records) < 4 or lines(log) <= lines(records):
        await asyncio.sleep(0.002)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    info = read_run_info(tmp_path / "run")
    assert info is not None and not info.complete and info.finished_at is not None
    answered = set(log.read_text().splitlines())
    recorded = {r.key for r in read_records(tmp_path / "run" / "records.jsonl")}
    assert 4 <= len(recorded) < 12 and len(answered) > len(recorded)  # some were half done

    second = MockProvider()
    result = await run_echo({"m": second}, judges={"j": MockProvider("judge")})
    assert result.complete and result.recorded == 12
    assert not answered & set(second.calls_by_key)  # every answered call came from the cache
    assert second.calls == 12 - len(answered)
    keys = [r.key for r in read_records(result.rundir / "records.jsonl")]
    assert len(keys) == len(set(keys)) == 12


async def test_a_torn_last_line_is_dropped_and_redone(run_echo: RunFn, tmp_path: Path) -> None:
    await run_echo({"m": MockProvider()})
    path = tmp_path / "run" / "records.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 40])  # cut the last line short
    assert len(read_records(path)) == 11
    again = MockProvider()
    result = await run_echo({"m": again})
    assert result.complete and again.calls == 0  # redone from the cache
    assert len(read_records(path)) == 12 and path.read_bytes().endswith(b"\n")


def test_a_bad_line_elsewhere_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text('{"task": "x"}\n{"also": "bad"}\n', encoding="utf-8")
    with pytest.raises(RunDirError, match=r"records\.jsonl, line 1: "):
        read_records(path)


async def test_failed_items_are_retried_on_resume(run_echo: RunFn, tmp_path: Path) -> None:
    bad = ProviderError("bad", retryable=False, status=400)
    first = await run_echo({"m": MockProvider(failures={"echo|c3|1|reply|": [bad]})})
    assert not first.complete and first.failed == 1
    info = read_run_info(first.rundir)
    assert info is not None and not info.complete
    healthy = MockProvider()
    second = await run_echo({"m": healthy})
    assert second.complete and healthy.calls == 1
    records = read_records(second.rundir / "records.jsonl")
    assert len(records) == 12 and all(r.status == "ok" for r in records)
    info = read_run_info(second.rundir)
    assert info is not None and info.complete


async def test_a_judge_verdict_lost_to_timeouts_is_a_loss_asked_again_on_resume(
    run_echo: RunFn,
) -> None:
    timeout = ProviderError("timed out", retryable=True)
    refused = ProviderError("HTTP 400: content filter", retryable=False, status=400)
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.0)
    judge = MockProvider("judge", failures=[timeout] * 3 + [None, refused])
    first = await run_echo({"m": MockProvider()}, judges={"j": judge}, policy=policy, concurrency=1)
    assert first.complete and first.failed == 0  # scored as losses, not failed
    lost = [r for r in read_records(first.rundir / "records.jsonl") if r.flags]
    assert sorted(r.permanent for r in lost) == [False, True]
    assert all(r.flags == ("judge-failed",) and r.error.startswith("judge: ") for r in lost)
    healthy = MockProvider("judge")
    second = await run_echo({"m": MockProvider()}, judges={"j": healthy}, policy=policy)
    assert second.complete and healthy.calls == 1  # the timed-out verdict, asked again
    records = read_records(second.rundir / "records.jsonl")
    assert len(records) == 12 and sum(bool(r.flags) for r in records) == 1  # the refusal stays


async def test_a_rundir_of_another_plan_is_refused(run_echo: RunFn, tmp_path: Path) -> None:
    await run_echo({"m": MockProvider()})
    with pytest.raises(RunDirError, match="differs in models"):
        await run_echo({"other": MockProvider()})
    with pytest.raises(RunDirError, match="seed"):
        await run_echo({"m": MockProvider()}, seed=5)


async def test_a_finished_run_rerun_makes_no_call(run_echo: RunFn) -> None:
    await run_echo({"m": MockProvider()})
    again = MockProvider()
    result = await run_echo({"m": again}, cache_path=None)
    assert result.complete and again.calls == 0


def test_kill_9_loses_only_calls_in_flight(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "data.jsonl", conversations=25, turns=4)
    out, cache, log = tmp_path / "run", tmp_path / "cache.sqlite", tmp_path / "calls.log"
    command = [
        sys.executable,
        str(HERE / "killable_run.py"),
        str(data),
        str(out),
        str(cache),
        str(log),
    ]
    process = subprocess.Popen(command, cwd=HERE)
    try:
        deadline = time.monotonic() + 30
        while lines(out / "records.jsonl") < 30 and time.monotonic() < deadline:
            assert process.poll() is None, "the run ended before it could be killed"
            time.sleep(0.005)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    before = Counter(log.read_text().splitlines())
    assert 30 <= sum(before.values()) < 100

    subprocess.run(command, cwd=HERE, check=True, timeout=60)
    calls = Counter(log.read_text().splitlines())
    records = read_records(out / "records.jsonl")
    assert len(records) == 100 and len({r.key for r in records}) == 100
    assert all(r.status == "ok" for r in records)
    repeated = [key for key, count in calls.items() if count > 1]
    # Only a call that had answered but was not yet stored when the process died can repeat:
    # at most one per call in flight.
    assert len(repeated) <= CONCURRENCY
    item_keys = {f"echo|{r.conversation_id}|{r.turn_index}|reply|" for r in records}
    assert set(calls) == item_keys


async def test_a_model_moved_to_another_server_resumes(run_echo: RunFn, tmp_path: Path) -> None:
    bad = ProviderError("bad", retryable=False, status=400)
    here = ModelEntry(name="m", spec="mock/default", base_url="http://127.0.0.1:1/v1")
    moved = here.model_copy(update={"base_url": "http://127.0.0.1:2/v1"})
    await run_echo({"m": MockProvider(failures={"echo|c0|0|reply|": [bad]})}, entries={"m": here})
    result = await run_echo({"m": MockProvider()}, entries={"m": moved})
    info = read_run_info(result.rundir)
    assert result.complete and info is not None and info.models[0].base_url == moved.base_url
