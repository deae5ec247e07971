"""A whole run: (dataset, tasks, models) in, a run directory out; re-running resumes it.

A RUNDIR that already holds this plan keeps its `ok` and `invalid` records and redoes the rest
(`failed` ones, judge verdicts lost to a failure that was not permanent, any lost to a kill);
the cache makes sure no call that came back is made again. The evaluated conversations are
written beside the records, so the run directory is all an analysis needs.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attunebench import __version__
from attunebench.data.careless import leave_out_careless
from attunebench.data.jsonl import sha256_file, write_conversations
from attunebench.data.schema import Conversation
from attunebench.data.validate import load_validated
from attunebench.engine.cache import ResponseCache
from attunebench.engine.caller import BoundModel, Engine, Keeper
from attunebench.engine.estimate import check_estimate, estimate, unpriced
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.plan import ALL, applicable, task_names, without_judge
from attunebench.engine.prepare import asked_kinds, prepare_models
from attunebench.engine.progress import RunProgress, batch_counts
from attunebench.engine.retry import RetryPolicy, Sleep
from attunebench.engine.scheduler import RecordKey, Unit, plan_units, record_key, run_units
from attunebench.engine.shards import SHARED_PLAN, Shard, plan_value
from attunebench.engine.spend import SpendCap
from attunebench.engine.training import teach
from attunebench.engine.wiring import (
    Found,
    adaptations,
    bind_models,
    capability_lines,
    capability_records,
    close_models,
    default_cache_path,
    preflight_found,
    preflight_models,
)
from attunebench.models.base import Provider, quiet
from attunebench.models.modelsfile import ModelEntry
from attunebench.models.registry import spec_kind
from attunebench.records import (
    ItemRecord,
    ModelInfo,
    RunInfo,
    SkippedPair,
    SuiteInfo,
    Tally,
    retry_on_resume,
)
from attunebench.rundir import (
    CONVERSATIONS_FILE,
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
from attunebench.tasks import make_tasks
from attunebench.tasks.base import CallRole, PlanError, Task, prompts_of
from attunebench.tasks.helpers.twins import DEFAULT_PERSON, PersonOption, person_twins

# The run.json fields that define a plan: a RUNDIR resumes only the plan it was made with
# (base URLs aside: the same model may come back on another server).
PLAN_FIELDS = (*SHARED_PLAN, "planned_items", "shard")
Say = Callable[[str], None]
Report = Callable[[int, int], None]  # (items done, items planned), after each record
ItemChooser = Callable[[Task[Any, Any], Sequence[Conversation]], Iterable[Any]]


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
    shard: Shard | None = None  # run only this share of the plan (engine.shards)
    suite: SuiteInfo | None = None  # the suite the data and tasks come from, if any
    person: PersonOption = DEFAULT_PERSON  # the items as shown, their person-hidden twins, or both
    max_cost: float | None = None  # USD the run may spend, every session together (engine.spend)
    # What each model's pre-flight found, made once by a driver for all its shards
    # (`preflight`): by model name, in place of each shard's own pre-flight call.
    preflight: Mapping[str, Found] | None = None
    include_careless: bool = False  # keep conversations marked careless where they were collected
    # Which items of each task the run asks, given the conversations (None: every item); a
    # simulated person's replay asks a few of each conversation's (simulators.replay).
    items: ItemChooser | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    rundir: Path
    planned: int
    recorded: int
    failed: int
    totals: Tally  # this session's calls, hits, tokens and cost (ledger.json has every session)
    skipped: tuple[SkippedPair, ...] = ()  # (task, model) pairs not applicable, not planned
    empty_tasks: tuple[str, ...] = ()  # tasks with no item on this data
    errors: tuple[tuple[str, str, int, str], ...] = ()  # (model, task, count, error), commonest
    adapted: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # by the pre-flight
    truncated: Mapping[str, int] = field(default_factory=dict)  # per model, answers cut off

    @property
    def complete(self) -> bool:
        return self.recorded == self.planned


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _model_info(entry: ModelEntry, role: CallRole, kind: str) -> ModelInfo:
    urls = entry.urls()
    return ModelInfo(
        spec=entry.spec,
        name=entry.name,
        role=role,
        params=entry.params.model_dump(mode="json", exclude_unset=True),
        base_url=",".join(urls) if urls else None,
        kind=kind,
        answer=entry.answer,
        family=entry.family,
        json_schema=entry.json_schema,
    )


@dataclass(frozen=True)
class Planned:
    """What the plan came to: the tasks, their items, and what was left out and why."""

    tasks: list[Task[Any, Any]]
    work: list[tuple[Task[Any, Any], Any, list[str]]]
    keys: set[RecordKey]
    skipped: list[SkippedPair]
    empty: list[str]


def _run_info(
    config: RunConfig, conversations: list[Conversation], plan: Planned, careless: int
) -> RunInfo:
    tasks = plan.tasks
    # Every task leaves out the conversations marked careless (data.careless), counted as such.
    careless_out = {"careless conversations": careless}
    prompts = {(p.id, p.version): p for task in tasks for p in prompts_of(task)}
    provenance = {c.source.name: dict(c.source.provenance) for c in conversations}
    return RunInfo(
        package_version=__version__,
        dataset=str(config.data),
        dataset_sha256=sha256_file(config.data),
        dataset_ids=sorted({c.source.name for c in conversations}),
        provenance=dict(sorted(provenance.items())),
        tasks=[task.name for task in tasks],
        task_options={task.name: task.options for task in tasks},
        left_out={
            task.name: counts
            for task in tasks
            if (
                counts := {
                    k: v for k, v in {**task.left_out(conversations), **careless_out}.items() if v
                }
            )
        },
        models=[_model_info(e, "subject", spec_kind(e.spec)) for e in config.models],
        judges=[_model_info(e, "judge", spec_kind(e.spec)) for e in config.judges],
        prompts=[prompts[key] for key in sorted(prompts)],
        seed=config.seed,
        limit=config.limit,
        shard=str(config.shard) if config.shard is not None else None,
        suite=config.suite,
        person=config.person,
        planned_items=len(plan.keys),
        empty_tasks=plan.empty,
        skipped=plan.skipped,
        started_at=_now(),
    )


def _resume(rundir: Path, info: RunInfo) -> tuple[RunInfo, list[ItemRecord]]:
    """The run.json to keep and the records already done; refuses a RUNDIR of another plan."""
    old = read_run_info(rundir)
    records_path = rundir / RECORDS_FILE
    if old is None:
        if records_path.exists():
            raise RunDirError(f"{rundir} has {RECORDS_FILE} but no {RUN_FILE}: not a run directory")
        return info, []
    latest = {r.key: r for r in read_records(records_path)} if records_path.exists() else {}
    answered = [r for r in latest.values() if r.status != "failed"]  # a key's last record wins
    kept = [r for r in answered if not retry_on_resume(r)]  # a judge's timeouts: asked again
    differs = [name for name in PLAN_FIELDS if plan_value(old, name) != plan_value(info, name)]
    if differs and answered:
        raise RunDirError(
            f"{rundir} holds a different run (it differs in {', '.join(differs)}); "
            "use a new --out, or the same options to resume it"
        )
    if records_path.exists():
        rewrite_records(records_path, kept)  # drops a torn last line and superseded failures
    if differs:  # a plan that failed before answering anything holds nothing to keep
        return info, []
    return info.model_copy(update={"started_at": old.started_at}), kept


def _items(
    task: Task[Any, Any], conversations: list[Conversation], config: RunConfig
) -> Iterable[Any]:
    """A task's items (those `config.items` chooses, where it does), with their person-hidden
    twins as `config.person` asks; a task that evaluates judges keeps its items as they are."""
    found = config.items(task, conversations) if config.items else task.items(conversations)
    return person_twins(found, config.person) if task.evaluates == "models" else found


def _plan(
    config: RunConfig,
    tasks: Sequence[Task[Any, Any]],
    conversations: list[Conversation],
    bound: Mapping[str, Any],
    pre_skipped: list[SkippedPair],
) -> Planned:
    subjects, judges = [e.name for e in config.models], [e.name for e in config.judges]
    evaluated, skipped = applicable(tasks, subjects, judges, bound)
    work = [(t, i, evaluated[t.name]) for t in tasks for i in _items(t, conversations, config)]
    keys = {record_key(i, m) for _, i, models in work for m in models}
    with_items = {t.name for t, _, _ in work}
    empty = [t.name for t in tasks if t.name not in with_items]
    return Planned(list(tasks), work, keys, pre_skipped + skipped, empty)


async def run(
    config: RunConfig,
    *,
    providers: Mapping[str, Provider] | None = None,
    tasks: Sequence[Task[Any, Any]] | None = None,
    policy: RetryPolicy | None = None,
    sleep: Sleep = asyncio.sleep,
    say: Say = quiet,
    report: Report | None = None,
    keeper: Keeper | None = None,
) -> RunResult:
    """Run (or resume) the plan `config` describes.

    `providers` (by model name) and `tasks` replace the ones the config would make, for
    embedding the engine and for testing it. Nothing is written before the data, the tasks,
    the models and the RUNDIR have all been checked. `report`, if given, is told how many items
    are done after each record; `keeper` keeps each call beyond this process as it is made.
    """
    if config.out.exists() and not config.out.is_dir():
        raise RunDirError(f"{config.out} is a file, not a run directory; choose another --out")
    conversations, careless = _conversations(config)
    judges = [e.name for e in config.judges]
    if tasks is None:
        tasks = make_tasks(task_names(config.tasks), config.task_options, config.seed)
    tasks, pre_skipped = without_judge(tasks, judges, from_all=ALL in config.tasks)
    bound = await _bound(config, providers)
    try:
        evaluated = frozenset(c.id for c in conversations)
        teach((m.provider for m in bound.values()), tasks, evaluated, config.data, config.person)
        plan = _plan(config, tasks, conversations, bound, pre_skipped)
        if not plan.keys and config.shard is None:  # a shard may hold nothing: its array runs on
            why = [f"task {task} has nothing to score on this data" for task in plan.empty]
            why += [f"task {s.task} does not apply to {s.model} ({s.reason})" for s in plan.skipped]
            raise PlanError("nothing to run: " + ("; ".join(why) or "no task was asked"))
        spend = _spend_cap(config, plan, bound)  # checked before the pre-flight's calls
        if config.check_servers:
            await preflight_models(bound, config.preflight)
        info, kept = _open_rundir(config, conversations, plan, bound, say, careless)
        done: set[RecordKey] = {r.key for r in kept if r.key in plan.keys}
        engine = _engine(config, bound, policy, sleep, spend, keeper)
        errors: Counter[tuple[str, str, str]] = Counter()
        units = plan_units(plan.work, done)
        failed = await _execute(config, engine, units, plan.keys, done, info, errors, report)
        if spend is not None and spend.stopped is not None:
            say(spend.stopped)
    finally:
        await close_models(bound)
    return RunResult(
        config.out,
        len(plan.keys),
        len(done),
        failed,
        engine.ledger.session(),
        tuple(plan.skipped),
        tuple(plan.empty),
        commonest(errors),
        info.adapted,
        {m: t.truncated for m, t in sorted(engine.ledger.by_model().items()) if t.truncated},
    )


async def _bound(
    config: RunConfig, providers: Mapping[str, Provider] | None = None, *, probe: bool = False
) -> dict[str, BoundModel]:
    """The run's models and judges, bound; a run's pre-flight waits for the cost check, a
    driver's (`probe`) is made here."""
    return await bind_models(
        config.models + config.judges,
        concurrency=config.concurrency,
        overrides=providers or {},
        # A shard given its driver's pre-flight reads no models endpoint of its own either.
        check=config.check_servers and (probe or config.preflight is None),
        probe=probe,
    )


async def preflight(config: RunConfig, say: Say = quiet) -> dict[str, Found]:
    """Each model's pre-flight, made once, as plain JSON (none where `check_servers` is off):
    a driver passes it on to its shards (`RunConfig.preflight`), and no shard makes its own."""
    bound = await _bound(config, probe=True)
    try:
        for line in capability_lines(bound):
            say(line)
        return preflight_found(bound) if config.check_servers else {}
    finally:
        await close_models(bound)


def _spend_cap(
    config: RunConfig, plan: Planned, bound: Mapping[str, BoundModel]
) -> SpendCap | None:
    """The run's dollar cap, checked against its estimate (with what earlier sessions spent)."""
    if config.max_cost is None:
        return None
    why = unpriced(bound)
    if why is not None:
        raise PlanError(why)
    ledger = read_ledger(config.out) if config.out.is_dir() else None
    spent = sum(entry.cost_usd for entry in ledger.entries) if ledger is not None else 0.0
    records = config.out / RECORDS_FILE  # what earlier sessions answered is not estimated
    answered = read_records(records) if records.is_file() else []
    done = {r.key for r in answered if r.status != "failed"} & plan.keys
    judges = [e.name for e in config.judges]
    by_model = estimate(plan_units(plan.work, done), bound, judges)
    check_estimate(config.max_cost, spent, by_model)
    return SpendCap(config.max_cost, spent=spent)


def _engine(
    config: RunConfig,
    bound: Mapping[str, BoundModel],
    policy: RetryPolicy | None,
    sleep: Sleep,
    spend: SpendCap | None = None,
    keeper: Keeper | None = None,
) -> Engine:
    return Engine(
        bound,
        cache=ResponseCache(config.cache_path) if config.cache_path else None,
        ledger=LedgerBook(read_ledger(config.out)),
        policy=policy,
        sleep=sleep,
        rng=random.Random(config.seed),
        spend=spend,
        keeper=keeper,
    )


def _conversations(config: RunConfig) -> tuple[list[Conversation], int]:
    """The conversations the run evaluates (the first `limit`, the shard's, careless ones left
    out unless kept), and how many careless ones were left out."""
    conversations = load_validated(config.data)[: config.limit]
    if config.shard is not None:
        conversations = [c for c in conversations if config.shard.holds(c.id)]
    if config.include_careless:
        return conversations, 0
    return leave_out_careless(conversations)


def _open_rundir(
    config: RunConfig,
    conversations: list[Conversation],
    plan: Planned,
    bound: Mapping[str, BoundModel],
    say: Say,
    careless: int,
) -> tuple[RunInfo, list[ItemRecord]]:
    """The RUNDIR made or resumed (run.json, the conversations, each provider attached); the
    records already done."""
    info, kept = _resume(config.out, _run_info(config, conversations, plan, careless))
    info = info.model_copy(
        update={"adapted": adaptations(bound), "capabilities": capability_records(bound)}
    )
    for line in capability_lines(bound):
        say(line)
    config.out.mkdir(parents=True, exist_ok=True)
    for model in bound.values():
        model.provider.attach(config.out)  # a batch provider's journal lives there
    write_json(config.out / RUN_FILE, info)
    if not (config.out / CONVERSATIONS_FILE).exists():
        write_conversations(config.out / CONVERSATIONS_FILE, conversations)
    return info, kept


def commonest(errors: Counter[tuple[str, str, str]]) -> tuple[tuple[str, str, int, str], ...]:
    """The most common error of each (model, task), with how often it came."""
    best: dict[tuple[str, str], tuple[int, str]] = {}
    for (model, task, error), count in errors.most_common():
        best.setdefault((model, task), (count, error))
    return tuple((m, t, count, error) for (m, t), (count, error) in sorted(best.items()))


async def _execute(
    config: RunConfig,
    engine: Engine,
    units: list[Unit],
    planned: set[RecordKey],
    done: set[RecordKey],
    info: RunInfo,
    errors: Counter[tuple[str, str, str]],
    report: Report | None = None,
) -> int:
    """Evaluate the units, appending each record as it comes; returns how many failed.
    Whatever happens (an error, Ctrl-C), what was recorded is left on disk, consistent."""
    writer = RecordWriter(config.out / RECORDS_FILE)
    failed = 0
    try:
        with RunProgress(
            len(planned),
            len(done),
            engine.ledger,
            enabled=config.progress,
            batches=lambda: batch_counts(engine.models.values()),
        ) as bar:

            def on_record(record: ItemRecord) -> None:
                nonlocal failed
                writer.write(record)
                if record.status == "failed":
                    failed += 1
                    errors[record.model, record.task, _gist(record.error or "")] += 1
                else:
                    done.add(record.key)
                bar.advance()
                if report is not None:
                    report(len(done), len(planned))

            judges = [e.name for e in config.judges]
            cache_dir = config.cache_path.parent if config.cache_path is not None else None
            if report is not None:
                report(len(done), len(planned))
            await prepare_models(engine.models, asked_kinds(units, judges), cache_dir, bar)
            await run_units(units, engine=engine, judges=judges, on_record=on_record)
    finally:
        writer.close()
        # This session's usage of each server a model started for the run (`local/`).
        used = {name: bound.provider.server_usage() for name, bound in engine.models.items()}
        servers = {name: usage for name, usage in used.items() if usage is not None}
        write_json(config.out / LEDGER_FILE, engine.ledger.to_ledger(servers))
        finished = {"finished_at": _now(), "complete": len(done) == len(planned)}
        write_json(config.out / RUN_FILE, info.model_copy(update=finished))
        if engine.cache is not None:
            engine.cache.close()
    return failed


def _gist(error: str, limit: int = 200) -> str:
    """An error without the parts that differ from call to call (which query, how long)."""
    first = error.split("; ")[0]
    return first.split(": ", 1)[-1][:limit]
