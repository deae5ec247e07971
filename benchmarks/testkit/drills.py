"""Reliability drills: a run against a faulty server, and a run killed and resumed, each set
against a run that went undisturbed.

`fault_drill` runs the engine twice on one dataset, against a fault-free server and against a
`FaultServer` with the given plan, and compares the records. `crash_drill` starts
`attunebench run` as a subprocess, kills it with SIGKILL at seeded points, resumes it with the
same command each time, and compares its records, and the server's count of successful calls
per request, with an uninterrupted run's (made meanwhile against a server of its own). Each
kill lands while calls are on the wire (the server holds new requests) and after every answer
the server delivered has reached the cache, so a call answered twice can only mean the engine
repeated a call that had succeeded.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attunebench.engine import (
    RECORDS_FILE,
    RetryPolicy,
    RunConfig,
    read_ledger,
    read_run_info,
    run,
)
from attunebench.models.modelsfile import ModelEntry, models_file_text
from testkit.records import Key, diff_records, run_records
from testkit.servers.fault_server import FaultPlan, FaultServer, repeated

FAST_RETRIES = RetryPolicy(max_attempts=5, base_delay_s=0.01, max_delay_s=0.05)
Records = dict[Key, dict[str, Any]]


def model_entries(base_url: str, timeout_s: float) -> tuple[ModelEntry, ModelEntry]:
    """A subject and a judge, both openai/ models on the server at `base_url`."""
    options: dict[str, Any] = {"timeout_s": timeout_s}
    return (
        ModelEntry(name="subject", spec="openai/subject", base_url=base_url, options=options),
        ModelEntry(name="judge", spec="openai/judge", base_url=base_url, options=options),
    )


def write_models_file(path: Path, base_url: str, timeout_s: float) -> Path:
    path.write_text(models_file_text(model_entries(base_url, timeout_s)), encoding="utf-8")
    return path


@dataclass(frozen=True)
class RunOutcome:
    records: Records
    stats: dict[str, Any]  # the server's counts (FaultCounts.snapshot)
    retries: int  # from ledger.json
    failed: int  # `failed` records


async def engine_run(
    data: Path,
    out: Path,
    plan: FaultPlan,
    *,
    timeout_s: float = 0.5,
    policy: RetryPolicy = FAST_RETRIES,
    concurrency: int = 16,
) -> RunOutcome:
    """One run of every task through the engine API against a fresh FaultServer and cache."""
    shutil.rmtree(out, ignore_errors=True)
    with FaultServer(plan) as server:
        subject, judge = model_entries(server.base_url, timeout_s)
        config = RunConfig(
            data=data,
            out=out,
            models=(subject,),
            judges=(judge,),
            concurrency=concurrency,
            cache_path=out.with_name(out.name + "-cache.sqlite"),
            progress=False,
        )
        with contextlib.suppress(FileNotFoundError):
            config.cache_path.unlink()  # type: ignore[union-attr]
        await run(config, policy=policy)
        stats = server.stats()
    records = run_records(out)
    ledger = read_ledger(out)
    retries = sum(e.retries for e in ledger.entries) if ledger else 0
    failed = sum(1 for r in records.values() if r["status"] == "failed")
    return RunOutcome(records, stats, retries, failed)


@dataclass(frozen=True)
class FaultDrill:
    clean: RunOutcome
    faulty: RunOutcome
    differences: list[str]

    @property
    def records_identical(self) -> bool:
        return not self.differences


async def fault_drill(data: Path, work: Path, plan: FaultPlan, **options: Any) -> FaultDrill:
    clean = await engine_run(data, work / "clean", FaultPlan(fail_rate=0.0), **options)
    faulty = await engine_run(data, work / "faulty", plan, **options)
    return FaultDrill(clean, faulty, diff_records(clean.records, faulty.records))


def _cli() -> list[str]:
    script = Path(sys.executable).with_name("attunebench")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from attunebench.cli import main; main()"]


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def cache_rows(path: Path) -> int:
    """The answers the response cache at `path` holds (0 before it is made)."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # not made yet
        return 0


@dataclass
class CrashDrill:
    planned: int
    kills: int = 0  # kills that landed before the run was complete
    sessions: int = 0
    unsettled_kills: int = 0  # kills made before the cache had every delivered answer
    differences: list[str] = field(default_factory=list)
    items_lost: int = 0
    repeated_successful_calls: int = 0
    faults_injected: int = 0
    retries: int = 0  # requests that repeated an earlier attempt (after a fault or a kill)

    @property
    def records_identical(self) -> bool:
        return not self.differences


class _CliRun:
    """`attunebench run` against one server, into one run directory, with one cache."""

    def __init__(self, data: Path, work: Path, server: FaultServer, timeout_s: float) -> None:
        self.out, self.cache = work / "run", work / "cache.sqlite"
        models = write_models_file(work / "models.toml", server.base_url, timeout_s)
        self.command = [
            *_cli(),
            "run",
            "--data",
            str(data),
            "--out",
            str(self.out),
            "--cache",
            str(self.cache),
            "--models-file",
            str(models),
            "--model",
            "subject",
            "--judge",
            "judge",
            "--no-progress",
        ]
        self.log = work / "cli.log"

    def start(self) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as log:
            return subprocess.Popen(self.command, stdout=log, stderr=log)

    def complete(self) -> None:
        self.finish(self.start())

    def finish(self, process: subprocess.Popen[bytes]) -> None:
        """Wait for a session to end; one that fails raises with its log's tail."""
        code = process.wait(600)
        if code != 0:
            tail = self.log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise RuntimeError(f"attunebench run exited {code}:\n{tail}")

    def planned(self, process: subprocess.Popen[bytes]) -> int:
        """The run's planned items, from the run.json a session writes before its first call."""
        while (info := read_run_info(self.out)) is None:
            if process.poll() is not None:
                self.finish(process)
                raise RuntimeError(f"attunebench run ended without writing {self.out}")
            time.sleep(0.01)
        return info.planned_items


def _kill_at(run: _CliRun, server: FaultServer, records: int, settle_s: float) -> tuple[bool, bool]:
    """Start a session and SIGKILL it once `records` are written; (killed, settled)."""
    process = run.start()
    try:
        while _lines(run.out / RECORDS_FILE) < records:
            if process.poll() is not None:
                return False, True  # it finished (or died) first
            time.sleep(0.01)
        server.hold()
        deadline = time.monotonic() + settle_s
        settled = False
        while time.monotonic() < deadline and not settled:
            stats = server.stats()
            settled = stats["answering"] == 0 and (
                cache_rows(run.cache) >= stats["successful_calls"]
            )
            time.sleep(0.005)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(30)
        return True, settled
    finally:
        server.release()
        if process.poll() is None:
            process.kill()
            process.wait(30)


def _kill_points(planned: int, kills: int, seed: int) -> list[int]:
    """Seeded record counts to kill at, clear of the run's first and last five records."""
    return sorted(random.Random(seed).sample(range(5, max(6, planned - 5)), kills))


def crash_drill(
    data: Path,
    work: Path,
    plan: FaultPlan,
    *,
    kills: int = 5,
    seed: int = 0,
    timeout_s: float = 1.0,
    settle_s: float = 10.0,
) -> CrashDrill:
    """An uninterrupted CLI run and, beside it against a server of its own, one killed `kills`
    times at seeded record counts (both mostly wait on faults and retries, so side by side
    they take little more than the longer one)."""
    shutil.rmtree(work, ignore_errors=True)
    (work / "whole").mkdir(parents=True)
    (work / "killed").mkdir()
    with FaultServer(plan) as reference, FaultServer(plan) as server:
        whole = _CliRun(data, work / "whole", reference, timeout_s)
        uninterrupted = whole.start()
        try:
            report = CrashDrill(planned=whole.planned(uninterrupted))
            killed = _CliRun(data, work / "killed", server, timeout_s)
            for point in _kill_points(report.planned, kills, seed):
                landed, settled = _kill_at(killed, server, point, settle_s)
                report.sessions += 1
                report.kills += landed
                report.unsettled_kills += not settled
            killed.complete()
            report.sessions += 1
            stats = server.stats()
            whole.finish(uninterrupted)
        finally:
            if uninterrupted.poll() is None:  # something above failed
                uninterrupted.kill()
                uninterrupted.wait(30)
        baseline = Counter(reference.stats()["successes"])
    expected = run_records(whole.out)
    actual = run_records(killed.out)
    report.differences = diff_records(expected, actual)
    report.items_lost = len(expected.keys() - actual.keys())
    report.repeated_successful_calls = repeated(Counter(stats["successes"]), baseline)
    report.faults_injected = stats["faults_injected"]
    # From the server: a killed session's ledger dies with it.
    report.retries = stats["retried_requests"]
    return report
