"""One shard of a `run --ray` run, as one Ray task does it (`engine.on_ray` submits them).

A task may run on any machine of the cluster, so it takes everything it needs with it and
brings everything back: the dataset's bytes, the shard's run directory as the last command
left it (its records, ledger, run.json, batch journal) and its own response cache. It runs
the shard (`run --shard i/N`) in a scratch folder of its own, with its own SQLite cache (never
one shared over the network), and returns the directory's files and the cache's bytes for the
driver to keep. A mistake in what was asked (a `ValueError`: the data, the models, the plan)
comes back as an error, the same on every try; anything else is raised, for Ray to retry.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from attunebench.engine.runner import Report, RunConfig, RunResult, run
from attunebench.engine.shards import Shard

CACHE_FILE = "cache.sqlite"
REPORT_EVERY_S = 0.5  # how often a task tells the driver's progress bar how far it got


@dataclass(frozen=True)
class ShardJob:
    """What one task is given: the run's config, its shard, and the shard's files so far."""

    config: RunConfig
    shard: Shard
    files: Mapping[str, bytes] = field(default_factory=dict)  # the shard's run directory
    cache: bytes | None = None  # the shard's own response cache, if it has one yet


@dataclass(frozen=True)
class ShardOutcome:
    """What one task brings back: the shard's files and cache, and how the run went (or the
    one line that says what was wrong)."""

    shard: Shard
    files: Mapping[str, bytes]
    cache: bytes | None
    result: RunResult | None = None
    error: str | None = None


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


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
    job: ShardJob, data: bytes, report: Callable[[int, int, int], None] | None = None
) -> ShardOutcome:
    """Run `job`'s shard in a scratch folder; `data` is the dataset's bytes. `report`, if
    given, hears (shard index, items done, items planned) as the shard goes."""
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
            job.config, data=dataset, out=out, cache_path=cache, progress=False, shard=job.shard
        )
        result: RunResult | None = None
        error: str | None = None
        try:
            result = asyncio.run(run(config, report=reporter(report, job.shard)))
        except ValueError as mistake:  # what was asked is wrong: every try says the same
            error = str(mistake)
        kept = cache.read_bytes() if cache is not None and cache.exists() else None
        return ShardOutcome(job.shard, _files(out), kept, result, error)
