"""One shard of a `run --ray` run, as one Ray task does it: on any machine, in a scratch folder,
with everything it needs carried along and each call and answer kept by the driver (`Courier`)
before it goes on (why: docs/scale.md). A mistake in what was asked (a `ValueError`) comes
back as an error, the same on every try; anything else is raised, for the driver to try the
shard again.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from attunebench.engine.cache import cache_value
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.runner import Report, RunConfig, RunResult, run
from attunebench.engine.shards import Shard
from attunebench.engine.wiring import Found
from attunebench.models.base import ModelOutput
from attunebench.on_ray.inbox import Inbox, Letter

CACHE_FILE = "cache.sqlite"
REPORT_EVERY_S = 0.5  # how often a task tells the driver's progress bar how far it got


class DriverStopped(Exception):
    """The driver is stopping: no call may go out."""


@dataclass(frozen=True)
class ShardJob:
    """What one task is given."""

    config: RunConfig
    shard: Shard
    attempt: int = 0
    files: Mapping[str, bytes] = field(default_factory=dict)  # the shard's run directory
    cache: bytes | None = None  # the shard's response cache, if it has one yet
    found: Mapping[str, Found] | None = None  # by model name; None: the shard probes itself


@dataclass(frozen=True)
class ShardOutcome:
    """What one task brings back: the shard's files, and how the run went (or what was wrong)."""

    shard: Shard
    attempt: int
    files: Mapping[str, bytes]
    result: RunResult | None = None
    error: str | None = None


class Courier:
    """The shard's `Keeper`: posts each call and each answer to the driver, and waits."""

    def __init__(self, inbox: Inbox, job: ShardJob) -> None:
        self._inbox = inbox
        self._shard = job.shard.index
        self._attempt = job.attempt
        self._written = 0

    def _letter(self, ledger: LedgerBook, rows: list[tuple[str, str]]) -> Letter:
        counted = ledger.to_ledger().model_dump(mode="json")
        self._written += 1
        return Letter(self._shard, self._attempt, self._written, counted, rows)

    async def sending(self, ledger: LedgerBook) -> None:
        if not await self._inbox.post(self._letter(ledger, []), sending=True):
            raise DriverStopped(f"shard {self._shard}: the driver is stopping")

    async def answered(
        self, key: str, output: ModelOutput, cost_usd: float, ledger: LedgerBook
    ) -> None:
        rows = [(key, cache_value(output, cost_usd))] if key else []
        await self._inbox.post(self._letter(ledger, rows), sending=False)


def reporter(report: Callable[[int, int, int], None] | None, shard: Shard) -> Report | None:
    """A `run(report=...)` callback telling `report(shard, done, planned)` now and then."""
    if report is None:
        return None
    last = [0.0]

    def told(done: int, planned: int) -> None:
        now = time.monotonic()
        if now - last[0] >= REPORT_EVERY_S or done == planned:
            last[0] = now
            report(shard.index, done, planned)

    return told


def run_shard(
    job: ShardJob,
    data: bytes,
    report: Callable[[int, int, int], None] | None = None,
    inbox: Inbox | None = None,
) -> ShardOutcome:
    """Run `job`'s shard in a scratch folder; `data` is the dataset's bytes. `report` hears
    (shard index, items done, items planned); `inbox` keeps each call and answer."""
    with tempfile.TemporaryDirectory(prefix="attunebench-shard-") as scratch:
        root = Path(scratch)
        dataset = root / job.config.data.name
        dataset.write_bytes(data)
        out = root / "run"
        out.mkdir()
        for name, content in job.files.items():
            (out / name).write_bytes(content)
        cache = root / CACHE_FILE if job.config.cache_path is not None else None
        if cache is not None and job.cache is not None:
            cache.write_bytes(job.cache)
        config = replace(
            job.config,
            data=dataset,
            out=out,
            cache_path=cache,
            progress=False,
            shard=job.shard,
            preflight=job.found,
        )
        keeper = Courier(inbox, job) if inbox is not None else None
        result: RunResult | None = None
        error: str | None = None
        try:
            result = asyncio.run(run(config, report=reporter(report, job.shard), keeper=keeper))
        except ValueError as mistake:  # what was asked is wrong: every try says the same
            error = str(mistake)
        files = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
        return ShardOutcome(job.shard, job.attempt, files, result, error)
