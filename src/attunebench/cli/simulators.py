"""`attunebench simulators validate`: a simulated user, checked against the people it stands in
for (docs/simulators.md). The simulators package is imported when the command runs."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from attunebench.cli.errors import clear_errors, fail, file_out, folder_out
from attunebench.cli.options import (
    RESAMPLES,
    Cache,
    IncludeSimulated,
    ModelsFile,
    NoCache,
    NoProgress,
    Resamples,
    Seed,
)
from attunebench.cli.run import model_entries
from attunebench.engine.stopping import stop_signals
from attunebench.models.modelsfile import ModelsFileError
from attunebench.models.registry import ProviderConfigError

if TYPE_CHECKING:
    from attunebench.analysis.schema import Estimate
    from attunebench.simulators import Plan, SimulatorsReport

app = typer.Typer(no_args_is_help=True, help="Simulated users, checked against real people.")
out = Console()


@app.command("validate")
def validate_command(
    simulator: Annotated[
        str, typer.Option(help="The simulated user: provider/model or a models-file name.")
    ],
    data: Annotated[
        list[Path], typer.Option("--data", help="A first-person attunebench/v1 file; repeat.")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for simulators.json.")],
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the first N conversations of each file.")
    ] = None,
    runs: Annotated[
        list[Path] | None, typer.Option("--runs", help="Run directories whose models to rank.")
    ] = None,
    supporter: Annotated[
        str | None,
        typer.Option(help="The model the simulated seeker talks with (default: the real one)."),
    ] = None,
    seeds: Annotated[int, typer.Option(min=1, help="Rollouts, each with its own seed.")] = 3,
    models_file: ModelsFile = None,
    temperature: Annotated[float, typer.Option(min=0, help="The simulator's sampling.")] = 0.7,
    top_p: Annotated[float, typer.Option(min=0, max=1, help="The simulator's top-p.")] = 0.95,
    exchanges: Annotated[
        int, typer.Option(min=1, help="Messages the simulated seeker writes.")
    ] = 3,
    turns: Annotated[
        int,
        typer.Option(
            min=1,
            help="Per conversation: items replayed per task, turns continued, messages graded.",
        ),
    ] = 6,
    include_simulated: IncludeSimulated = False,
    include_baselines: Annotated[
        bool, typer.Option(help="Rank the runs' baselines beside the models under test.")
    ] = False,
    seed: Seed = 0,
    resamples: Resamples = RESAMPLES,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations at once.")] = 4,
    cache: Cache = None,
    no_cache: NoCache = False,
    no_progress: NoProgress = False,
) -> None:
    """Ask a simulated user what real people said of themselves, and say how far it stands
    in for them: replay, realism, ranking, noise floor and leaks, in DIR/simulators.json."""
    from attunebench.engine import default_cache_path
    from attunebench.simulators import Plan, Sampling

    folder_out(out_dir)
    if cache is not None:
        file_out(cache, "--cache")
    try:
        entries = model_entries([simulator, *([supporter] if supporter else [])], models_file)
    except (ModelsFileError, ProviderConfigError) as error:
        fail(str(error))
    plan = Plan(
        simulator=entries[0],
        supporter=entries[1] if supporter else None,
        data=tuple(data),
        out=out_dir,
        runs=tuple(runs or ()),
        limit=limit,
        sampling=Sampling(temperature=temperature, top_p=top_p, seeds=tuple(range(seeds))),
        exchanges=exchanges,
        per_conversation=turns,
        include=frozenset(
            kind
            for kind, asked in (("simulated", include_simulated), ("baseline", include_baselines))
            if asked
        ),
        seed=seed,
        resamples=resamples,
        cache_path=None if no_cache else cache or default_cache_path(),
        concurrency=concurrency,
        progress=not no_progress,
    )
    report = _run(plan)
    show(report)
    out.print(f"wrote {out_dir / 'simulators.json'}", markup=False, highlight=False)


def _run(plan: Plan) -> SimulatorsReport:
    from attunebench.analysis import RunLoadError
    from attunebench.data.validate import DatasetError
    from attunebench.simulators import SimulatorError, validate

    errors = (SimulatorError, RunLoadError, DatasetError, ModelsFileError, ProviderConfigError)
    with clear_errors(*errors), stop_signals() as stop:
        try:
            return asyncio.run(validate(plan))
        except KeyboardInterrupt:
            how = "interrupted" if stop.signal == signal.SIGINT else f"stopped by {stop.name}"
            kept = (
                "the answers that came back are cached: the same command goes on from them"
                if plan.cache_path
                else "nothing is kept (--no-cache)"
            )
            fail(f"{how}; {kept}", stop.exit_code)


def _shown(estimate: Estimate | None) -> str:
    if estimate is None:
        return "—"
    if estimate.value is None:
        return f"— ({estimate.reason})" if estimate.reason else "—"
    interval = ""
    if estimate.ci_low is not None and estimate.ci_high is not None:
        interval = f" [{estimate.ci_low:.3f}, {estimate.ci_high:.3f}]"
    return f"{estimate.value:.3f}{interval}"


def show(report: SimulatorsReport) -> None:
    """The replay per task, then realism, ranking and leaks, one line each."""
    table = Table(title=f"{report.simulator.model} as the people it stands in for (replay)")
    for column in ("task", "metric", "simulator", "crowd", "minus crowd", "share of ceiling"):
        table.add_column(column)
    for task, figure in report.replay.items():
        noise = " (noise)" if figure.minus_crowd and figure.minus_crowd.within_noise else ""
        table.add_row(
            task,
            figure.metric,
            _shown(figure),
            _shown(figure.crowd),
            _shown(figure.minus_crowd) + noise,
            _shown(figure.share_of_ceiling) if figure.share_of_ceiling else "not measured",
        )
    out.print(table)
    realism = report.realism
    lines = {
        "realism AUROC (0.5: indistinguishable)": _shown(realism.auroc),
        "negative self-labels, simulator minus people": _shown(realism.emotion_by_third),
        "intensity change, simulator minus people": _shown(realism.intensity_change),
        "negative feedback share, simulator minus people": _shown(realism.negative_feedback_share),
        "ranking fidelity (Spearman, mean over tasks)": _shown(report.ranking.spearman),
    }
    for name, shown in lines.items():
        out.print(f"{name}: {shown}", markup=False, highlight=False)
    leaks = report.leaks
    out.print(
        f"leaks: {leaks.instructions} of {leaks.messages} messages repeat their instructions, "
        f"{leaks.supporter_role} read as the other side's",
        markup=False,
        highlight=False,
    )
