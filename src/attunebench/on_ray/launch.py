"""`attunebench run --ray`: a run's shards as Ray tasks, cut as `run --shard i/N` cuts the plan,
kept by the driver as they go and joined into one run directory (what is checked before any
task, where the run goes, and why a stop or a lost worker loses no answer: docs/scale.md)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from attunebench.data.validate import load_validated
from attunebench.engine.cache import ResponseCache, merge_caches
from attunebench.engine.progress import terminal_bar
from attunebench.engine.runner import (
    RunConfig,
    RunResult,
    Say,
    commonest,
    preflight,
    run,
)
from attunebench.engine.shards import Shard, merge_shards
from attunebench.engine.wiring import Found
from attunebench.models.base import quiet
from attunebench.models.modelsfile import ModelEntry
from attunebench.models.registry import parse_spec
from attunebench.on_ray.book import SHARDS_DIR, ShardBook, shard_dir
from attunebench.on_ray.inbox import Inbox
from attunebench.on_ray.progress import Board
from attunebench.on_ray.shard import CACHE_FILE, ShardOutcome, run_shard
from attunebench.records import RunInfo, Tally
from attunebench.rundir import RUN_FILE, RunDirError, write_json

if TYPE_CHECKING:  # psutil, which the reaper needs, comes with the ray extra
    from attunebench.on_ray.reaper import Reaper

RETRIES = 3  # tries of a shard after its first
GRACE_S = 3.0  # how long a stopping driver keeps the answers of calls already on the wire
Task = Callable[..., ShardOutcome]
ONE_PROCESS = (
    "--ray: no Ray cluster runs here, and no model of the run computes on this machine "
    "(hf/, local/): the run goes in one process, which makes the same calls without a local "
    "Ray's start-up (--ray-address local starts one anyway)"
)
AUTH_HINT = (
    "a cluster with token authentication (Ray's default since 2.60) is reached only with "
    "RAY_AUTH_MODE=token and its token (RAY_AUTH_TOKEN) set here as on every node: see "
    "docs/scale.md"
)


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


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayRunError("run --ray needs ray: pip install 'attunebench[ray]'") from None
    return ray


def _children() -> set[int]:
    import psutil  # the ray extra's, as ray itself is

    return {p.pid for p in psutil.Process().children()}


class _NoCluster(Exception):
    """`auto` found no cluster, and a local Ray would not pay off."""


def computes_here(config: RunConfig) -> bool:
    """Whether a model of the run computes on the machine its shard runs on (`hf/`, `local/`):
    only then can a local Ray's shards do more than one process, whose calls already run
    concurrently."""
    return any(parse_spec(e.spec)[0] in ("hf", "local") for e in config.models + config.judges)


def _connect(ray: Any, address: str, *, local_pays: bool = True) -> tuple[bool, Reaper | None]:
    """Join the cluster at `address`, or start a local Ray (`local`, or `auto` finding none,
    where `local_pays`); whether this run connected, and the reaper watching a Ray it started."""
    if ray.is_initialized():  # the caller's own Ray: used as it is, left running
        return False, None
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    before = _children()
    try:
        if address == "local":
            ray.init(address="local", include_dashboard=False, **quiet)
        else:
            _join(ray, address, quiet)
    except (ConnectionError, ray.exceptions.RayError) as error:
        if address != "auto" or not isinstance(error, ConnectionError):
            said = " ".join(str(error).split())
            hint = f"; {AUTH_HINT}" if os.environ.get("RAY_AUTH_MODE") != "token" else ""
            raise RayRunError(f"--ray-address {address}: {said}{hint}") from None
        if not local_pays:
            raise _NoCluster from None
        ray.init(address="local", include_dashboard=False, **quiet)  # none runs: a local one
    started = _children() - before
    from attunebench.on_ray.reaper import Reaper

    return True, Reaper.watch(started) if started else None


# Ray Client's proxy starts a server for each client, and now and then reports that start as
# failed where the next try succeeds (`ray.util.client.server.proxier`): tries of a `ray://`
# connection that fails so, a second apart more each time.
CLIENT_TRIES = 3
CLIENT_START_FAILED = "Starting Ray client server failed"


def _join(ray: Any, address: str, quiet: Mapping[str, Any]) -> None:
    """`ray.init` at `address`, tried again where Ray Client's server failed to start."""
    for attempt in range(1, CLIENT_TRIES + 1):
        try:
            ray.init(address=address, **quiet)
            return
        except ConnectionError as error:
            if attempt == CLIENT_TRIES or CLIENT_START_FAILED not in str(error):
                raise
            time.sleep(attempt)


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


def _on_gpu(entry: ModelEntry, cluster_gpus: float) -> bool:
    """An `hf/` checkpoint on a CUDA device: the one it names, else the default where the
    cluster has GPUs (the provider takes CUDA where it finds it)."""
    if parse_spec(entry.spec)[0] != "hf":
        return False
    device = entry.options.get("device")
    return str(device).startswith("cuda") if device is not None else cluster_gpus > 0


def task_options(config: RunConfig, cluster: Mapping[str, float]) -> dict[str, Any]:
    """What each shard's task is submitted with: one CPU, one GPU where its models run on one,
    no retries by Ray (the driver tries a shard again, from what it kept)."""
    gpus = cluster.get("GPU", 0.0)
    on_gpu = any(_on_gpu(entry, gpus) for entry in config.models + config.judges)
    return {"num_cpus": 1, "num_gpus": 1 if on_gpu else 0, "max_retries": 0}


def _why(error: Exception) -> str:
    """A failed task's error in a few words: what the shard raised, or why Ray lost it."""
    cause = getattr(error, "cause", None)  # a task's own exception, behind Ray's traceback
    said = f"{type(cause).__name__}: {cause}" if isinstance(cause, Exception) else str(error)
    return " ".join(said.split())[:300]


class Shards:
    """The shards' tasks on the cluster, until each is kept or failed for good."""

    def __init__(
        self,
        ray: Any,
        config: RunConfig,
        options: RayOptions,
        task: Task,
        found: Mapping[str, Found] | None,
    ) -> None:
        self._ray = ray
        self._config = config
        self._retries = options.retries
        self._found = found
        self._remote = ray.remote(task).options(**task_options(config, ray.cluster_resources()))
        self._data = ray.put(config.data.read_bytes())
        self.inbox = Inbox.start(ray)
        # The run's cache (--cache) gets each answer as its shard's does: a single-process run
        # on it reuses them even if this run is never resumed.
        self._cache = ResponseCache(config.cache_path) if config.cache_path else None
        self.board: Board | None = None
        self.books: dict[int, ShardBook] = {}
        self._running: dict[Any, tuple[ShardBook, int]] = {}  # task ref: (book, attempt)
        self._tries: Counter[int] = Counter()
        self.outcomes: dict[Shard, ShardOutcome] = {}
        self.failures: dict[Shard, str] = {}

    def submit(self, shard: Shard) -> None:
        book = self.books.get(shard.index)
        if book is None:
            book = self.books[shard.index] = ShardBook(self._config, shard)
        self._tries[shard.index] += 1
        attempt = sum(self._tries.values())  # unique over the command's tries
        job = book.job(self._config, attempt, self._found)
        ref = self._remote.remote(job, self._data, self.board, self.inbox)
        self._running[ref] = (book, attempt)

    def keep_letters(self) -> None:
        """Keep what the shards posted, then let them go on."""
        letters = self.inbox.collect(self._ray)
        touched = set()
        for _, letter in letters:
            book = self.books[letter.shard]
            book.take(letter)
            touched.add(book)
            if self._cache is not None:
                for key, value in letter.rows:
                    self._cache.put_value(key, value)
        for book in touched:
            book.write()
        if self._cache is not None:
            self._cache.flush()
        self.inbox.kept([number for number, _ in letters])

    def settle(self, *, retry: bool = True) -> None:
        """Keep each task that returned; try a failed one again (while `retry` and tries are
        left), or note it failed for good."""
        if not self._running:
            return
        ready, _ = self._ray.wait(list(self._running), num_returns=len(self._running), timeout=0)
        for ref in ready:
            book, _ = self._running.pop(ref)
            try:
                outcome = self._ray.get(ref)
            except self._ray.exceptions.RayError as error:
                if retry and self._tries[book.shard.index] <= self._retries:
                    self.submit(book.shard)
                else:
                    self.failures[book.shard] = _why(error)
                continue
            book.keep(self._config, outcome)
            self.outcomes[book.shard] = outcome

    def gather(self, count: int) -> None:
        """Submit every shard of `count` and keep them as they go, until each is kept or failed
        for good."""
        try:
            bar = terminal_bar(Console(stderr=True), self._config.progress)
            shown = bar.add_task(f"shards 0/{count}", total=None)
            with bar:
                self.board = None if bar.disable else Board.start(self._ray)
                for index in range(1, count + 1):
                    self.submit(Shard(index, count))
                while self._running:
                    self.keep_letters()
                    self.settle()
                    finished = len(self.outcomes) + len(self.failures)
                    done, planned = self.board.totals(self._ray) if self.board else (0, 0)
                    described = f"shards {finished}/{count}"
                    bar.update(shown, description=described, completed=done, total=planned or None)
        finally:
            self.wind_down()

    def wind_down(self) -> None:
        """However the run ends: no call goes out any more, the answers of those on the wire
        are kept for up to GRACE_S, then every task still running is ended."""
        with contextlib.suppress(Exception):
            self.inbox.close(self._ray)
            deadline = time.monotonic() + GRACE_S
            while self._running and time.monotonic() < deadline:
                self.keep_letters()
                self.settle(retry=False)
        for ref in list(self._running):
            with contextlib.suppress(Exception):
                self._ray.cancel(ref, force=True)
        self._running.clear()
        with contextlib.suppress(Exception):
            self.inbox.stop(self._ray)
        if self.board is not None:
            with contextlib.suppress(Exception):
                self.board.stop(self._ray)
        for book in self.books.values():
            book.close()
        if self._cache is not None:
            self._cache.close()

    def session(self) -> Tally:
        total = Tally()
        for book in self.books.values():
            total.add(book.session())
        return total


def run_on_ray(
    config: RunConfig, options: RayOptions, *, say: Say = quiet, task: Task = run_shard
) -> RunResult:
    """Run (or resume) the plan `config` describes, its shards as Ray tasks; `task` replaces
    what each task does, for testing."""
    ray = _import_ray()
    out = config.out
    if (out / RUN_FILE).exists() and not (out / SHARDS_DIR).is_dir():
        raise RayRunError(f"{out} holds a run made without --ray; use a new --out")
    load_validated(config.data)  # a mistake stops the run here, before any task
    found = asyncio.run(preflight(config, say))
    resumed = (out / SHARDS_DIR).is_dir()
    try:
        started, reaper = _connect(
            ray, options.address, local_pays=resumed or computes_here(config)
        )
    except _NoCluster:
        say(ONE_PROCESS)
        return asyncio.run(run(replace(config, preflight=found or None)))
    try:
        count = options.shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
        _refuse_other_count(out, count)
        shards = Shards(ray, config, options, task, found or None)
        shards.gather(count)
    finally:
        if started:
            ray.shutdown()
        if reaper is not None:
            reaper.finish()
    mistakes = [o.error for o in shards.outcomes.values() if o.error is not None]
    if mistakes:
        raise RayRunError(mistakes[0])
    if shards.failures:
        failed = "; ".join(
            f"shard {shard} failed for good: {why}" for shard, why in shards.failures.items()
        )
        raise ShardsFailed(
            f"{failed}. The other shards are kept in {out / SHARDS_DIR}: run the same command "
            "to resume"
        )
    kept = sorted(shards.outcomes, key=lambda s: s.index)
    info = _merge(config, [shard_dir(out, s) for s in kept])
    results = [o.result for o in shards.outcomes.values() if o.result is not None]
    return _result(out, info, results, shards.session())


def _merge(config: RunConfig, folders: list[Path]) -> RunInfo:
    """The shards into RUNDIR (replacing an earlier merge), their caches into the run's."""
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


def _result(out: Path, info: RunInfo, results: list[RunResult], totals: Tally) -> RunResult:
    """The shards' results as one run's; `totals`, what every try of this command counted."""
    errors: Counter[tuple[str, str, str]] = Counter()
    truncated: Counter[str] = Counter()
    for result in results:
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
