"""`attunebench run`: evaluate models on a dataset's tasks into a run directory (resumable)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from attunebench.cli.errors import clear_errors, err, fail, file_out, folder_out
from attunebench.cli.options import Cache, Limit, ModelsFile, NoCache, NoProgress, command_of
from attunebench.data.importers import ImportFormatError, ImportOptionError
from attunebench.data.validate import DatasetError
from attunebench.engine import (
    RUN_FILE,
    RunConfig,
    RunDirError,
    RunResult,
    default_cache_path,
    merge_shards,
    parse_shard,
    read_ledger,
    read_run_info,
    task_names,
)
from attunebench.engine import run as run_engine
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.stopping import stop_signals
from attunebench.engine.suite_run import suite_run_config
from attunebench.models.modelsfile import (
    ModelEntry,
    ModelsFileError,
    load_models_file,
    resolve_model,
    short_names,
)
from attunebench.models.registry import ProviderConfigError
from attunebench.on_ray.launch import RayOptions, RayRunError, ShardsFailed, run_on_ray
from attunebench.registry import RegistryError
from attunebench.suite import SuiteError
from attunebench.tasks import load_tasks
from attunebench.tasks.base import PlanError, takes_option
from attunebench.tasks.helpers.twins import DEFAULT_PERSON, check_person

CONTEXTS = ("blind", "informed", "both")
# Mistakes in what was asked for: each message names the file, field or server at fault.
CLEAR_ERRORS = (
    DatasetError,
    ImportFormatError,
    ImportOptionError,
    SuiteError,
    ModelsFileError,
    PlanError,
    ProviderConfigError,
    RegistryError,
    RunDirError,
    RayRunError,
)


def context_options(names: list[str], context: str | None) -> dict[str, dict[str, Any]]:
    """`--context` goes to every chosen task that declares a `context` option."""
    if context is None:
        return {}
    if context not in CONTEXTS:
        raise typer.BadParameter(f"must be one of {', '.join(CONTEXTS)}", param_hint="--context")
    tasks = load_tasks()
    return {
        name: {"context": context} for name in names if takes_option(tasks.get(name), "context")
    }


def quiet_model_loading() -> None:
    """No progress bars from the libraries that load models (transformers' "Loading weights",
    the hub's downloads, tqdm). They read these variables when first imported; one imported
    already (the command run inside a program that loaded a model) is told directly."""
    os.environ["TQDM_DISABLE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"
    hub: Any = sys.modules.get("huggingface_hub.utils")
    if hub is not None:
        hub.disable_progress_bars()
    transformers_logging: Any = sys.modules.get("transformers.utils.logging")
    if transformers_logging is not None:
        transformers_logging.disable_progress_bar()


def model_entries(refs: list[str], models_file: Path | None) -> tuple[ModelEntry, ...]:
    known = load_models_file(models_file) if models_file is not None else {}
    return tuple(resolve_model(ref, known) for ref in refs)


def skipped_lines(result: RunResult) -> list[str]:
    """One line per (task, model) pair left out of the plan, with why; tasks with no items."""
    lines = [f"not applicable: task {s.task} for {s.model} ({s.reason})" for s in result.skipped]
    lines += [
        f"no items: task {task} has nothing to score on this data" for task in result.empty_tasks
    ]
    return lines


def time_line(rundir: Path) -> str | None:
    """Calls and call time of each model over the run (ledger.json), slowest first."""
    ledger = read_ledger(rundir)
    if ledger is None:
        return None
    per = LedgerBook(ledger).by_model()
    total = sum(t.latency_s for t in per.values()) or 1.0
    ranked = sorted(per.items(), key=lambda item: -item[1].latency_s)
    return "time per model: " + ", ".join(
        f"{model} {t.calls:.0f} calls {t.latency_s:.1f} s ({t.latency_s / total:.0%})"
        for model, t in ranked
    )


def _ray_options(
    ray: bool, shards: int | None, address: str | None, shard: str | None
) -> RayOptions | None:
    """RayOptions for `--ray`, None without it; one line for options that do not fit."""
    if not ray:
        given = [
            name for name, value in (("--ray-shards", shards), ("--ray-address", address)) if value
        ]
        if given:
            fail(f"{', '.join(given)} go with --ray")
        return None
    if shard is not None:
        fail("--ray runs every shard of the plan: drop --shard")
    return RayOptions(shards=shards, address=address or "auto")


def _execute(config: RunConfig, ray: RayOptions | None) -> RunResult:
    """One process, or (`--ray`) the plan's shards as Ray tasks."""
    if ray is None:
        return asyncio.run(run_engine(config, say=typer.echo))
    try:
        return run_on_ray(config, ray, say=typer.echo)
    except ShardsFailed as failed:
        fail(str(failed), 1)


def _warn(line: str) -> None:
    err.print(line, markup=False, highlight=False, soft_wrap=True)


def _summary(result: RunResult) -> None:
    for model, changes in sorted(result.adapted.items()):  # the pre-flight's, kept in run.json
        adapted = "; ".join(f"{name} {action}" for name, action in sorted(changes.items()))
        typer.echo(f"adapted: {model}: {adapted} (the server refused them; see run.json 'adapted')")
    for model, n in result.truncated.items():  # scored invalid: raise max_tokens
        _warn(
            f"cut off: {model}: {n} answer{'s' if n > 1 else ''} reached the token budget "
            "(finish reason length/max_tokens, scored invalid); raise params.max_tokens"
        )
    for line in skipped_lines(result):
        typer.echo(line)
    for model, task, count, error in result.errors:  # the commonest error of each pair
        _warn(f"failed {count}x: {model} on {task}: {error}")
    t = result.totals
    reasoned = f" ({t.reasoning_tokens} reasoning)" if t.reasoning_tokens else ""
    if t.cached_input_tokens:
        reasoned += f" ({t.cached_input_tokens} input cached)"
    batched = f" ({t.batch_calls} calls by batch, at the batch price)" if t.batch_calls else ""
    typer.echo(
        f"{result.recorded}/{result.planned} items recorded, {result.failed} failed; "
        f"{t.calls} calls, {t.cache_hits} cache hits, {t.retries} retries, "
        f"{t.input_tokens}+{t.output_tokens}{reasoned} tokens, ${t.cost_usd:.4f}{batched}"
    )
    timed = time_line(result.rundir)
    if timed is not None:
        typer.echo(timed)
    typer.echo(f"run directory: {result.rundir}")


def _run(asked: RunOptions) -> None:
    """The outputs checked, the run's configuration made and run, what happened told; exit 1
    while some items have no answer."""
    if asked.no_progress or not sys.stderr.isatty():  # no bar is drawn then: no loading bars either
        quiet_model_loading()
    if asked.out.exists() and not asked.out.is_dir():
        fail(f"--out {asked.out} is a file, not a run directory; choose another --out")
    folder_out(asked.out)
    if asked.cache is not None:
        file_out(asked.cache, "--cache")
    try:
        share = parse_shard(asked.shard) if asked.shard is not None else None
        person = check_person(asked.person)
    except ValueError as error:
        fail(str(error))
    on_ray = _ray_options(asked.ray, asked.ray_shards, asked.ray_address, asked.shard)
    if on_ray is not None and asked.max_cost is not None:
        # Each shard counts only its own spend: the run as a whole could pass the cap.
        fail("--max-cost is not kept across --ray shards: drop --ray, or --max-cost")
    with clear_errors(*CLEAR_ERRORS):
        try:
            config = replace(
                _planned(asked),
                models=short_names(model_entries(asked.model, asked.models_file)),
                judges=model_entries(asked.judge or [], asked.models_file),
                concurrency=asked.concurrency,
                cache_path=None if asked.no_cache else asked.cache or default_cache_path(),
                progress=not asked.no_progress,
                shard=share,
                person=person,
                max_cost=asked.max_cost,
                include_careless=asked.include_careless,
            )
            result = _execute(config, on_ray)
        except ModelsFileError as error:
            said, file = str(error), asked.models_file
            # a field's path (`models.NAME.options...`) says no file; a file's own message does
            named = file is None or said.startswith(f"{file}:")
            fail(f"{file}: {said}" if said.startswith("models.") and not named else said)
    _summary(result)
    if not result.complete:
        err.print("some items have no answer yet; run the same command again to retry them")
        raise typer.Exit(1)


def _stoppable(asked: RunOptions) -> None:
    """`_run`, with SIGTERM taken as Ctrl-C (engine.stopping). Stopped, a run keeps what was
    recorded and exits 130 (Ctrl-C) or 143 (SIGTERM); a signal that lands once every item is
    recorded stops nothing, and the run exits as finished."""
    begun = datetime.now(UTC).isoformat(timespec="seconds")
    with stop_signals() as stop:
        try:
            _run(asked)
        except KeyboardInterrupt:
            if _finished_since(asked.out, begun):
                typer.echo(f"{stop.name} came after every item was recorded: {asked.out}")
                raise typer.Exit(0) from None
            how = "interrupted" if stop.signal == signal.SIGINT else f"stopped by {stop.name}"
            _warn(f"{how}; what was recorded is kept: run the same command to resume {asked.out}")
            raise typer.Exit(stop.exit_code) from None


def _finished_since(out: Path, begun: str) -> bool:
    """Whether run.json says every planned item was recorded, at `begun` or after."""
    try:
        info = read_run_info(out) if (out / RUN_FILE).is_file() else None
    except RunDirError:
        return False
    return info is not None and info.complete and (info.finished_at or "") >= begun


def _planned(asked: RunOptions) -> RunConfig:
    """The data, tasks, task options, limit and seed: a shipped suite's, or those given."""
    if asked.suite is not None:
        flags = ("--data", "--task", "--seed", "--context", "--limit")
        given = (asked.data, asked.task, asked.seed, asked.context, asked.limit)
        conflicting = [flag for flag, value in zip(flags, given, strict=True) if value is not None]
        if conflicting:
            raise SuiteError(
                f"--suite fixes the data, tasks and seed: drop {', '.join(conflicting)}"
            )
        return suite_run_config(asked.suite, asked.out)[0]
    if asked.data is None:
        raise typer.BadParameter("give --data FILE or --suite NAME", param_hint="--data")
    tasks = asked.task or ["all"]
    return RunConfig(
        data=asked.data,
        out=asked.out,
        models=(),
        tasks=tuple(tasks),
        task_options=context_options(task_names(tasks), asked.context),
        limit=asked.limit,
        seed=asked.seed or 0,
    )


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """Run models on tasks; re-running the same command resumes and repeats no successful call."""

    model: Annotated[
        list[str], typer.Option("--model", help="provider/model or a models-file name; repeat.")
    ]
    out: Annotated[Path, typer.Option("--out", help="The run directory (resumed if it exists).")]
    data: Annotated[
        Path | None, typer.Option("--data", help="An attunebench/v1 JSON Lines file.")
    ] = None
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            help="A shipped suite (attunebench suite list): its data, tasks, options and seed.",
        ),
    ] = None
    task: Annotated[
        list[str] | None, typer.Option("--task", help="all (default), or a task name; repeat.")
    ] = None
    judge: Annotated[
        list[str] | None, typer.Option("--judge", help="A judge model, like --model; repeat.")
    ] = None
    models_file: ModelsFile = None
    concurrency: Annotated[
        int, typer.Option(min=1, help="Calls in flight per server, unless the models file says.")
    ] = 16
    limit: Limit = None
    # None, not 0: --suite refuses a --seed given beside it
    seed: Annotated[int | None, typer.Option(help="Seed of every random choice (default 0).")] = (
        None
    )
    context: Annotated[
        str | None, typer.Option(help="blind, informed or both (tasks that take it).")
    ] = None
    cache: Cache = None
    no_cache: NoCache = False
    no_progress: NoProgress = False
    shard: Annotated[
        str | None,
        typer.Option(help="i/N: run only shard i of N of the plan, by conversation (merge after)."),
    ] = None
    ray: Annotated[
        bool, typer.Option("--ray", help="Run the plan's shards as Ray tasks, merged into --out.")
    ] = False
    ray_shards: Annotated[
        int | None,
        typer.Option("--ray-shards", min=1, help="Shards for --ray (default: the cluster's CPUs)."),
    ] = None
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help=(
                "The Ray cluster for --ray: HOST:PORT, ray://HOST:PORT, local (a Ray of its "
                "own), or auto (default: a running one, else a local Ray where a model "
                "computes here, else one process)."
            ),
        ),
    ] = None
    person: Annotated[
        str,
        typer.Option(
            help="shown (default), hidden (the person's own words replaced by a placeholder) "
            "or both: each item beside its person-hidden twin (report: the person gap)."
        ),
    ] = DEFAULT_PERSON
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            min=0,
            help="USD the run may spend (every session together): refused before any call "
            "when its estimate is over, stopped (resumable) before a call that would pass it.",
        ),
    ] = None
    include_careless: Annotated[
        bool,
        typer.Option(
            "--include-careless",
            help="Keep the conversations marked careless where they were collected (left out "
            "by default, and counted in the report).",
        ),
    ] = False


run = command_of(RunOptions, _stoppable)


def merge(
    shards: Annotated[list[Path], typer.Argument(help="The run directories of every shard.")],
    out: Annotated[Path, typer.Option("--out", help="The merged run directory (new).")],
) -> None:
    """Join the shards of one run (`run --shard i/N`) into one run directory."""
    try:
        info = merge_shards(shards, out)
    except RunDirError as error:
        fail(str(error))
    state = "complete" if info.complete else "not complete: resume the shards, then merge again"
    typer.echo(f"merged {len(shards)} shards: {info.planned_items} items planned, {state}")
    typer.echo(f"run directory: {out}")
