"""The `run --ray` fault drills: a Ctrl-C to the driver, a shard's worker killed, the driver
killed, each against a `FaultServer`, and the same command run again until the run is whole.

A drill starts `attunebench run --ray` as a subprocess against the server, which holds the
first calls until every shard has its calls on the wire, lets some through, then holds again:
the fault lands while the shards' calls wait at the server (`in_flight`, at most one per shard
and concurrency slot). Afterwards the server has counted every call made (`received`: a
shard's call after its driver died too), and the drill reads the run's ledger. A run that
never pays twice ends with calls made = items planned + the calls lost at the fault, and its
ledger counting every one of them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from attunebench.engine import read_ledger, read_run_info
from testkit.drills import cache_rows, write_models_file
from testkit.servers.fault_server import FaultServer

LIMIT = 20  # conversations of the data (the sample's: 41 items of a one-call task)
CONCURRENCY = 2
SHARDS = 2
LATENCY_S = 0.05  # each call's time at the server: the shards are mid-run at the fault
Fault = Callable[[subprocess.Popen[bytes]], None]


@dataclass
class DrillOutcome:
    planned: int = 0  # the run's items (one call each)
    in_flight: int = 0  # calls held at the server when the fault landed
    received: int = 0  # calls the server received, every session (pre-flight calls aside)
    received_at_fault: int = 0  # of them, those of the faulted session
    kept_at_fault: int = 0  # answers in the run's cache (--cache) when that session ended
    preflights: int = 0  # pre-flight calls the server answered, every session
    model_lists: int = 0  # reads of its /v1/models, every session
    ledger_calls: int = 0
    ledger_lost: int = 0
    ledger_retries: int = 0
    ledger_failures: int = 0
    sessions: list[int] = field(default_factory=list)  # each command's exit code
    left: list[str] = field(default_factory=list)  # processes of the run still running after

    @property
    def ledger_total(self) -> int:
        return self.ledger_calls + self.ledger_lost + self.ledger_retries + self.ledger_failures


def cli_command() -> list[str]:
    script = Path(sys.executable).with_name("attunebench")
    return [str(script)] if script.exists() else [sys.executable, "-m", "attunebench"]


class RayDrill:
    """One run directory, one server, one cluster address: the command and its faults."""

    def __init__(
        self,
        data: Path,
        task: str,
        work: Path,
        server: FaultServer,
        address: str,
        env: Mapping[str, str],
    ) -> None:
        self.out, self.log, self.cache = work / "run", work / "cli.log", work / "cache.sqlite"
        models = write_models_file(work / "models.toml", server.base_url, 10.0)
        self.server, self.env = server, dict(env)
        self.command = [
            *cli_command(),
            "run",
            *("--data", str(data), "--task", task, "--limit", str(LIMIT)),
            *("--models-file", str(models), "--model", "subject"),
            *("--out", str(self.out), "--cache", str(self.cache)),
            *("--concurrency", str(CONCURRENCY), "--no-progress"),
            *("--ray", "--ray-shards", str(SHARDS), "--ray-address", address),
        ]

    def start(self) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as log:
            return subprocess.Popen(self.command, stdout=log, stderr=log, env=self.env)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def _until(
        self, done: Callable[[], bool], driver: subprocess.Popen[bytes], wait_s: float
    ) -> bool:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if done():
                return True
            if driver.poll() is not None:
                raise RuntimeError(f"the run ended before its fault:\n{self.tail()}")
            time.sleep(0.02)
        return False

    def mid_run(self, driver: subprocess.Popen[bytes]) -> int:
        """Hold the server until every slot of every shard waits there, let some calls
        through, hold again once each shard is waiting anew; the calls held then."""
        slots = SHARDS * CONCURRENCY
        stats = self.server.stats
        self.server.hold()
        if not self._until(lambda: stats()["waiting"] >= slots, driver, 240):
            raise RuntimeError(f"the shards never all called:\n{self.tail()}")
        first = stats()["received"]
        self.server.release()
        self._until(lambda: stats()["received"] >= first + 2 * slots, driver, 60)
        self.server.hold()
        self._until(lambda: stats()["waiting"] >= slots, driver, 5)  # a shard may be done
        time.sleep(0.3)
        return int(stats()["waiting"])


def run_drill(drill: RayDrill, fault: Fault, *, resume: bool = True) -> DrillOutcome:
    """Start the command, land `fault` mid-run, release the server, wait for the command
    (at most 10 minutes), then run it again while it is not complete."""
    outcome = DrillOutcome()
    driver = drill.start()
    try:
        outcome.in_flight = drill.mid_run(driver)
        fault(driver)
        time.sleep(0.5)
        drill.server.release()
        outcome.sessions.append(driver.wait(600))
        outcome.kept_at_fault = cache_rows(drill.cache)
        outcome.received_at_fault = int(drill.server.stats()["received"])
    finally:
        drill.server.release()
        if driver.poll() is None:
            driver.kill()
            driver.wait(30)
    info = read_run_info(drill.out)
    while resume and (info is None or not info.complete) and len(outcome.sessions) < 4:
        again = drill.start()
        outcome.sessions.append(again.wait(600))
        info = read_run_info(drill.out)
    outcome.planned = info.planned_items if info is not None else 0
    ledger = read_ledger(drill.out)
    for entry in ledger.entries if ledger is not None else ():
        outcome.ledger_calls += entry.calls
        outcome.ledger_lost += entry.lost
        outcome.ledger_retries += entry.retries
        outcome.ledger_failures += entry.failures
    stats = drill.server.stats()
    outcome.received = int(stats["received"])
    outcome.preflights, outcome.model_lists = int(stats["preflights"]), int(stats["model_lists"])
    return outcome


def interrupt(driver: subprocess.Popen[bytes]) -> None:
    """Ctrl-C, to the driver alone (as a terminal sends it to the foreground process)."""
    os.kill(driver.pid, signal.SIGINT)


def kill(driver: subprocess.Popen[bytes]) -> None:
    driver.kill()
    driver.wait(30)


def shard_workers(roots: list[psutil.Process]) -> list[psutil.Process]:
    """The processes among `roots`' descendants running a shard's task now."""
    found = []
    for root in roots:
        with contextlib.suppress(psutil.Error):
            for process in root.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    if "run_shard" in process.name() or "run_shard" in " ".join(process.cmdline()):
                        found.append(process)
    return found


def watch_descendants(driver: subprocess.Popen[bytes], seen: dict[int, psutil.Process]) -> None:
    """Note the driver's descendants now (they outlive it, if something is wrong)."""
    with contextlib.suppress(psutil.Error):
        for process in psutil.Process(driver.pid).children(recursive=True):
            seen.setdefault(process.pid, process)


def still_running(processes: Mapping[int, psutil.Process], wait_s: float) -> list[str]:
    """Those of `processes` still running after up to `wait_s` seconds, by name."""
    deadline = time.monotonic() + wait_s
    alive = [p for p in processes.values() if p.is_running()]
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = [p for p in alive if p.is_running()]
    named = []
    for process in alive:
        with contextlib.suppress(psutil.Error):
            named.append(f"{process.pid} {process.name()}")
    return named
