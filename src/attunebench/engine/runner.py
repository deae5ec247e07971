"""A whole run: (dataset, tasks, models) in, a run directory out; re-running resumes it.

The data is validated first. The plan is every (task item, model) pair, less the (task, model)
pairs whose model cannot answer what the task asks (a baseline with no reply to write): those
are listed in run.json as skipped, neither planned nor failed. A RUNDIR that already
holds this plan keeps its `ok` and `invalid` records and redoes the rest (`failed` ones and
any lost to a kill), with the cache making sure no call that came back is made again. A run is
complete when every planned item has an `ok` or `invalid` record.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attunebench import __version__
from attunebench.data.schema import Conversation
from attunebench.data.validate import load_validated
from attunebench.engine.cache import ResponseCache
from attunebench.engine.caller import BoundModel, Engine
from attunebench.engine.ledger import LedgerBook, Tally
from attunebench.engine.progress import RunProgress
from attunebench.engine.retry import RetryPolicy, Sleep
from attunebench.engine.rundir import (
    LEDGER_FILE,
    RECORDS_FILE,
    RUN_FILE,
    RecordWriter,
    RunDirError,
    read_ledger,
    read_records,
    read_run_info,
    rewrite_records,
    write_json,
)
from attunebench.engine.scheduler import RecordKey, Unit, plan_units, record_key, run_units
from attunebench.engine.wiring import bind_models, close_models, default_cache_path
from attunebench.models.base import Provider
from attunebench.models.modelsfile import ModelEntry
from attunebench.models.registry import spec_kind
from attunebench.records import ItemRecord, ModelInfo, RunInfo, SkippedPair
from attunebench.registry import RegistryError
from attunebench.tasks.base import TASKS, CallRole, Task, applicable_models, evaluated_models

# The run.json fields that define a plan: a RUNDIR resumes only the plan it was made with
# (base URLs aside: the same model may come back on another server).
PLAN_FIELDS = ("dataset_sha256", "tasks", "task_options", "models", "judges", "prompts", "seed",
               "limit", "planned_items")


@dataclass(frozen=True, slots=True)
class RunConfig:
    data: Path
    out: Path
    models: tuple[ModelEntry, ...]
    tasks: tuple[str, ...] = ("all",)
    judges: tuple[ModelEntry, ...] = ()
    task_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    concurrency: int = 16
    limit: int | None = None  # the first N conversations of the dataset
    seed: int = 0
    cache_path: Path | None = field(default_factory=default_cache_path)
    progress: bool = True
    check_servers: bool = True


@dataclass(frozen=True, slots=True)
class RunResult:
    rundir: Path
    planned: int
    recorded: int
    failed: int
    totals: Tally  # this session's calls, hits, tokens and cost (ledger.json has every session)
    skipped: tuple[SkippedPair, ...] = ()  # (task, model) pairs not applicable, not planned

    @property
    def complete(self) -> bool:
        return self.recorded == self.planned


def task_names(requested: Sequence[str]) -> list[str]:
    """`all` means every registered task; unknown names fail with the known ones listed."""
    importlib.import_module("attunebench.tasks")  # the package registers its task modules
    if "all" in requested:
        if not TASKS.names():
            raise RegistryError("no tasks are registered")
        return TASKS.names()
    names = list(dict.fromkeys(requested))
    for name in names:
        TASKS.get(name)  # raises RegistryError naming the known tasks
    return names


def make_tasks(names: list[str], options: Mapping[str, Mapping[str, Any]], seed: int) -> list[Task]:
    """Each task from its factory; `seed` goes to those that take one."""
    tasks = []
    for name in names:
        factory = TASKS.get(name)
        kwargs = dict(options.get(name, {}))
        if "seed" in inspect.signature(factory).parameters:
            kwargs.setdefault("seed", seed)
        tasks.append(factory(**kwargs))
    return tasks


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _model_info(entry: ModelEntry, role: CallRole, kind: str) -> ModelInfo:
    urls = entry.urls()
    return ModelInfo(
        spec=entry.spec, name=entry.name, role=role,
        params=entry.params.model_dump(mode="json", exclude_unset=True),
        base_url=",".join(urls) if urls else None, kind=kind,
    )


def _run_info(
    config: RunConfig, conversations: list[Conversation], tasks: Sequence[Task], planned: int,
    skipped: list[SkippedPair],
) -> RunInfo:  # fmt: skip
    prompts = {(p.id, p.version): p for task in tasks for p in task.prompts}
    return RunInfo(
        package_version=__version__,
        dataset=str(config.data),
        dataset_sha256=sha256_file(config.data),
        dataset_ids=sorted({c.source.name for c in conversations}),
        tasks=[task.name for task in tasks],
        task_options={task.name: task.options for task in tasks},
        models=[_model_info(e, "subject", spec_kind(e.spec)) for e in config.models],
        judges=[_model_info(e, "judge", spec_kind(e.spec)) for e in config.judges],
        prompts=[prompts[key] for key in sorted(prompts)],
        seed=config.seed,
        limit=config.limit,
        planned_items=planned,
        skipped=skipped,
        started_at=_now(),
    )


def _plan_value(info: RunInfo, name: str) -> object:
    """A plan field as compared on resume: servers may move (replicas, ports), models may not."""
    value = getattr(info, name)
    if name in ("models", "judges"):
        return [model.model_copy(update={"base_url": None}) for model in value]
    return value


def _resume(rundir: Path, info: RunInfo) -> tuple[RunInfo, list[ItemRecord]]:
    """The run.json to keep and the records already done; refuses a RUNDIR of another plan."""
    old = read_run_info(rundir)
    records_path = rundir / RECORDS_FILE
    if old is None:
        if records_path.exists():
            raise RunDirError(f"{rundir} has {RECORDS_FILE} but no {RUN_FILE}: not a run directory")
        return info, []
    differs = [name for name in PLAN_FIELDS if _plan_value(old, name) != _plan_value(info, name)]
    if differs:
        raise RunDirError(
            f"{rundir} holds a different run (it differs in {', '.join(differs)}); "
            "use a new --out, or the same options to resume it"
        )
    latest = {r.key: r for r in read_records(records_path)}  # the last record of a key wins
    kept = [r for r in latest.values() if r.status != "failed"]
    rewrite_records(records_path, kept)  # drops a torn last line and superseded failures
    return info.model_copy(update={"started_at": old.started_at}), kept


async def run(
    config: RunConfig,
    *,
    providers: Mapping[str, Provider] | None = None,
    tasks: Sequence[Task] | None = None,
    policy: RetryPolicy | None = None,
    sleep: Sleep = asyncio.sleep,
) -> RunResult:
    """Run (or resume) the plan `config` describes.

    `providers` (by model name) and `tasks` replace the ones the config would make, for
    embedding the engine and for testing it. Nothing is written before the data, the tasks,
    the models and the RUNDIR have all been checked.
    """
    conversations = load_validated(config.data)[: config.limit]
    if tasks is None:
        tasks = make_tasks(task_names(config.tasks), config.task_options, config.seed)
    subjects, judges = [e.name for e in config.models], [e.name for e in config.judges]
    for task in tasks:
        evaluated_models(task, subjects, judges)  # a task short of judges fails before binding
    bound = await bind_models(
        config.models + config.judges, concurrency=config.concurrency,
        overrides=providers or {}, check=config.check_servers,
    )
    try:
        evaluated, skipped = _applicable(tasks, subjects, judges, bound)
        work = [(t, i, evaluated[t.name]) for t in tasks for i in t.items(conversations)]
        planned: set[RecordKey] = {record_key(i, m) for _, i, models in work for m in models}
        info = _run_info(config, conversations, tasks, len(planned), skipped)
        info, kept = _resume(config.out, info)
        config.out.mkdir(parents=True, exist_ok=True)
        write_json(config.out / RUN_FILE, info)
        done: set[RecordKey] = {r.key for r in kept if r.key in planned}
        engine = Engine(
            bound, cache=ResponseCache(config.cache_path) if config.cache_path else None,
            ledger=LedgerBook(read_ledger(config.out)), policy=policy, sleep=sleep,
            rng=random.Random(config.seed),
        )
        failed = await _execute(config, engine, plan_units(work, done), planned, done, info)
    finally:
        await close_models(bound)
    return RunResult(
        config.out, len(planned), len(done), failed, engine.ledger.session(), tuple(skipped)
    )


def _applicable(
    tasks: Sequence[Task], subjects: list[str], judges: list[str], bound: Mapping[str, BoundModel]
) -> tuple[dict[str, list[str]], list[SkippedPair]]:
    """Each task's models that can answer it, and the (task, model) pairs left out."""
    providers = {name: model.provider for name, model in bound.items()}
    evaluated: dict[str, list[str]] = {}
    skipped: list[SkippedPair] = []
    for task in tasks:
        evaluated[task.name], left_out = applicable_models(task, subjects, judges, providers)
        skipped.extend(left_out)
    return evaluated, skipped


async def _execute(
    config: RunConfig, engine: Engine, units: list[Unit], planned: set[RecordKey],
    done: set[RecordKey], info: RunInfo,
) -> int:
    """Evaluate the units, appending each record as it comes; returns how many failed.

    Whatever happens (an error, a cancel, Ctrl-C), the records so far, the ledger and run.json
    are left on disk, consistent, for the next run to resume from.
    """
    writer = RecordWriter(config.out / RECORDS_FILE)
    failed = 0
    try:
        with RunProgress(len(planned), len(done), engine.ledger, enabled=config.progress) as bar:

            def on_record(record: ItemRecord) -> None:
                nonlocal failed
                writer.write(record)
                if record.status == "failed":
                    failed += 1
                else:
                    done.add(record.key)
                bar.advance()

            await run_units(
                units, engine=engine, judges=[e.name for e in config.judges],
                on_record=on_record,
            )
    finally:
        writer.close()
        write_json(config.out / LEDGER_FILE, engine.ledger.to_ledger())
        finished = {"finished_at": _now(), "complete": len(done) == len(planned)}
        write_json(config.out / RUN_FILE, info.model_copy(update=finished))
        if engine.cache is not None:
            engine.cache.close()
    return failed
