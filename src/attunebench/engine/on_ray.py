"""`attunebench run --ray`: a run's shards as Ray tasks, joined into one run directory.

The plan is cut into `--ray-shards N` shards (default: the cluster's CPUs), exactly as
`run --shard i/N` cuts it (`engine.shards`), and each shard is one Ray task
(`ray_shard.run_shard`) submitted to the cluster at `--ray-address` (default `auto`: a
running cluster, else a local Ray started for the run and stopped after it). Before any task
is sent, the data is checked and the models are made and probed once here, so a mistake stops
the run in one line, and what each hosted model accepts is said.

Each task runs its shard in a scratch folder with its own SQLite cache, never a shared file,
and brings the shard's files back; the driver keeps each shard as it returns, in
`RUNDIR/shards/I-of-N/` (an ordinary shard run directory, with its `cache.sqlite`), then merges
the shards into RUNDIR (`merge_shards`) and their caches into the run's cache. A task that
fails is retried by Ray (`retries`); one that fails for good leaves the others' shards kept,
and the same command resumes: each shard starts from its kept directory and cache, so no
call that came back is made again. The driver shows one progress bar over every shard,
which the tasks report to through a small actor.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attunebench.data.validate import load_validated
from attunebench.engine.cache import merge_caches
from attunebench.engine.ledger import Tally
from attunebench.engine.ray_progress import Board, ShardsBar
from attunebench.engine.ray_shard import CACHE_FILE, ShardJob, ShardOutcome, run_shard
from attunebench.engine.runner import RunConfig, RunResult, Say, commonest
from attunebench.engine.shards import Shard, merge_shards
from attunebench.engine.wiring import bind_models, capability_lines, close_models
from attunebench.records import RunInfo
from attunebench.rundir import RUN_FILE, RunDirError, read_run_info, write_json

SHARDS_DIR = "shards"
RETRIES = 3  # tries of a shard after its first, as Ray counts them
Task = Callable[..., ShardOutcome]


class RayRunError(ValueError):
    """`run --ray` cannot start as asked: no ray, an unreachable cluster, a RUNDIR of a run
    made without --ray."""


class ShardsFailed(RuntimeError):
    """A shard failed for good after its retries; the others' shards are kept."""


@dataclass(frozen=True, slots=True)
class RayOptions:
    shards: int | None = None  # None: the cluster's CPUs
    address: str = "auto"
    retries: int = RETRIES


def _quiet(line: str) -> None:
    return None


def shard_dir(out: Path, shard: Shard) -> Path:
    return out / SHARDS_DIR / f"{shard.index}-of-{shard.count}"


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayRunError("run --ray needs ray: pip install 'attunebench[ray]'") from None
    return ray


def _connect(ray: Any, address: str) -> bool:
    """Join the cluster at `address`, or start a local Ray when `auto` finds none; whether
    this run connected (and so disconnects, stopping a Ray it started)."""
    if ray.is_initialized():  # the caller's own Ray: used as it is, left running
        return False
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
    try:
        ray.init(address=address, **quiet)
    except ConnectionError as error:
        if address != "auto":
            raise RayRunError(f"--ray-address {address}: {error}") from None
        ray.init(include_dashboard=False, **quiet)  # no cluster runs: a local one
    return True


def _refuse_other_count(out: Path, count: int) -> None:
    """A RUNDIR's shards are resumed only as they were cut: other cuts would ask again what
    its shards answered (their caches are the shards' own)."""
    folder = out / SHARDS_DIR
    kept = {p.name.split("-of-")[-1] for p in folder.iterdir()} if folder.is_dir() else set()
    if kept and kept != {str(count)}:
        raise RayRunError(
            f"{out} holds {' and '.join(sorted(kept))} shards; resume it with --ray-shards "
            f"{min(kept, key=int)}, or use a new --out"
        )


async def _precheck(config: RunConfig, say: Say) -> None:
    """The data and the models checked here, once, before any task; what each hosted model
    accepts said."""
    load_validated(config.data)
    bound = await bind_models(
        config.models + config.judges,
        concurrency=config.concurrency,
        overrides={},
        check=config.check_servers,
    )
    try:
        for line in capability_lines(bound):
            say(line)
    finally:
        await close_models(bound)


def _job(config: RunConfig, shard: Shard) -> ShardJob:
    folder = shard_dir(config.out, shard)
    files = {}
    if folder.is_dir():
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    cache = files.pop(CACHE_FILE, None)
    return ShardJob(config, shard, files, cache)


def _keep(config: RunConfig, outcome: ShardOutcome) -> None:
    """A shard's files in its folder of RUNDIR, as soon as its task returns."""
    folder = shard_dir(config.out, outcome.shard)
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in outcome.files.items():
        (folder / name).write_bytes(content)
    if outcome.cache is not None:
        (folder / CACHE_FILE).write_bytes(outcome.cache)
    info = read_run_info(folder)
    if info is not None:  # the task read the data from its scratch copy
        write_json(folder / RUN_FILE, info.model_copy(update={"dataset": str(config.data)}))


def _why(error: Exception) -> str:
    """A failed task's error in a few words: what the shard raised, or why Ray lost it."""
    cause = getattr(error, "cause", None)  # a task's own exception, behind Ray's traceback
    said = f"{type(cause).__name__}: {cause}" if isinstance(cause, Exception) else str(error)
    return " ".join(said.split())[:300]


def _gather(ray: Any, config: RunConfig, count: int, options: RayOptions, task: Task) -> Any:
    """Submit every shard, keep each as it returns; (outcomes, failures by shard)."""
    data = ray.put(config.data.read_bytes())
    remote = ray.remote(task).options(
        num_cpus=1, max_retries=options.retries, retry_exceptions=True
    )
    outcomes: dict[Shard, ShardOutcome] = {}
    failures: dict[Shard, str] = {}
    with ShardsBar(count, enabled=config.progress) as bar:
        board = Board.start(ray) if bar.drawn else None
        shards = [Shard(index, count) for index in range(1, count + 1)]
        refs = {remote.remote(_job(config, shard), data, board): shard for shard in shards}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
            for ref in ready:
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as error:
                    failures[refs[ref]] = _why(error)
                    continue
                _keep(config, outcome)
                outcomes[refs[ref]] = outcome
            bar.show(len(outcomes) + len(failures), board.totals(ray) if board else None)
        if board is not None:
            board.stop(ray)
    return outcomes, failures


def run_on_ray(
    config: RunConfig, options: RayOptions, *, say: Say = _quiet, task: Task = run_shard
) -> RunResult:
    """Run (or resume) the plan `config` describes, its shards as Ray tasks; `task` replaces
    what each task does, for testing."""
    ray = _import_ray()
    out = config.out
    if (out / RUN_FILE).exists() and not (out / SHARDS_DIR).is_dir():
        raise RayRunError(f"{out} holds a run made without --ray; use a new --out")
    asyncio.run(_precheck(config, say))
    started = _connect(ray, options.address)
    try:
        count = options.shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
        _refuse_other_count(out, count)
        outcomes, failures = _gather(ray, config, count, options, task)
    finally:
        if started:
            ray.shutdown()
    mistakes = [o.error for o in outcomes.values() if o.error is not None]
    if mistakes:
        raise RayRunError(mistakes[0])
    if failures:
        failed = "; ".join(
            f"shard {shard} failed for good: {why}" for shard, why in failures.items()
        )
        raise ShardsFailed(
            f"{failed}. The other shards are kept in {out / SHARDS_DIR}: run the same command "
            "to resume"
        )
    info = _merge(config, [shard_dir(out, s) for s in sorted(outcomes, key=lambda s: s.index)])
    return _result(out, info, [o.result for o in outcomes.values() if o.result is not None])


def _merge(config: RunConfig, folders: list[Path]) -> RunInfo:
    """The shards into RUNDIR (replacing what an earlier command merged), their caches into
    the run's cache."""
    staging = config.out / ".merging"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        info = merge_shards(folders, staging)
    except RunDirError as error:
        raise RayRunError(str(error)) from None
    info = info.model_copy(update={"dataset": str(config.data)})
    write_json(staging / RUN_FILE, info)
    for merged in staging.iterdir():
        os.replace(merged, config.out / merged.name)
    staging.rmdir()
    if config.cache_path is not None:
        caches = [folder / CACHE_FILE for folder in folders if (folder / CACHE_FILE).exists()]
        merge_caches(config.cache_path, caches)
    return info


def _result(out: Path, info: RunInfo, results: list[RunResult]) -> RunResult:
    """The shards' results as one run's: counts and tallies summed."""
    totals = Tally()
    errors: Counter[tuple[str, str, str]] = Counter()
    truncated: Counter[str] = Counter()
    for result in results:
        totals.add(result.totals)
        for model, task, count, error in result.errors:
            errors[model, task, error] += count
        truncated.update(result.truncated)
    adapted: Mapping[str, Mapping[str, str]] = info.adapted
    return RunResult(
        out,
        sum(r.planned for r in results),
        sum(r.recorded for r in results),
        sum(r.failed for r in results),
        totals,
        tuple(info.skipped),
        tuple(info.empty_tasks),
        commonest(errors),
        adapted,
        dict(sorted(truncated.items())),
    )
