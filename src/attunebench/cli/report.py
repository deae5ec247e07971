"""`attunebench report` and `attunebench power`: analyse run directories.

The analysis (numpy, scipy) is imported when a command runs, not when the CLI starts, so
other commands do not pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from attunebench.cli.consoles import CommandConsole
from attunebench.cli.errors import err, fail, folder_out, os_problem
from attunebench.cli.options import (
    RESAMPLES,
    IncludeSimulated,
    MovedData,
    Resamples,
    Seed,
    command_of,
)

if TYPE_CHECKING:
    from attunebench.analysis.comparisons.power import PowerCurve
    from attunebench.analysis.loading import Runs
    from attunebench.analysis.schema import Summary
    from attunebench.report.render import Format

out = CommandConsole()
FORMATS: tuple[Format, ...] = ("html", "markdown", "json")
# The analysis default, repeated so the CLI starts without importing it (a test compares them).
SIMULATIONS = 400  # analysis.comparisons.power.DEFAULT_SIMULATIONS
SIMULATORS_FILE = "simulators.json"  # simulators.schema.SIMULATORS_FILE (a test compares them)


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """Analyse run directories: scores with intervals, rank agreement, discriminability, report.
    A folder of `simulators validate` gets its page (simulators.html)."""

    rundirs: Annotated[list[Path], typer.Argument(help="Run directories to merge (same data).")]
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for summary.json and the report.")]
    fmt: Annotated[str, typer.Option("--format", help="html, markdown or json.")] = "html"
    seed: Seed = 0
    resamples: Resamples = RESAMPLES
    cluster: Annotated[str, typer.Option(help="Resampled unit: conversation or participant.")] = (
        "conversation"
    )
    data: MovedData = None
    allow_mixed_data: Annotated[
        bool, typer.Option(help="Merge runs on different datasets (with a warning).")
    ] = False
    include_simulated: IncludeSimulated = False
    all_items: Annotated[
        bool,
        typer.Option(help="Score every answered item, not only those every model answered."),
    ] = False
    train: Annotated[
        Path | None,
        typer.Option(
            help="A train split (disjoint from the data) the references are fitted on; "
            "default: a suite run's own, else cross-fitted by conversation."
        ),
    ] = None
    compare: Annotated[
        list[str] | None,
        typer.Option(
            "--compare",
            metavar="A,B",
            help="Two models under test: A's headline minus B's on each task, on the same "
            "items, with a paired interval (repeat for more pairs).",
        ),
    ] = None


def _pairs(values: list[str]) -> tuple[tuple[str, str], ...]:
    """Each `--compare` value as a pair (a, b): two different names, comma-separated."""
    pairs = []
    for value in values:
        names = [name.strip() for name in value.split(",")]
        if len(names) != 2 or not all(names) or names[0] == names[1]:
            raise typer.BadParameter(
                f"{value!r}: give two different models as A,B", param_hint="--compare"
            )
        pairs.append((names[0], names[1]))
    return tuple(pairs)


def _check_models(names: list[str], known: list[str], option: str, what: str) -> None:
    """Stop with one line where a name is not among `known` (`what`: what they are, plural)."""
    from attunebench.registry import did_you_mean

    for name in names:
        if name not in known:
            fail(
                f"{option}: {name!r} is not among the {what} in these runs"
                f"{did_you_mean(name, known)} ({what} present: {', '.join(known) or 'none'})"
            )


def _check_compared(
    runs: Runs, pairs: tuple[tuple[str, str], ...], include_simulated: bool
) -> None:
    """`--compare` names models under test of these runs (a yardstick is never compared)."""
    from attunebench.analysis.provenance import Roster

    roster = Roster.of(runs, include_simulated)
    under_test = sorted({r.model for r in runs.records if roster.is_subject(r.model)})
    compared = [name for pair in pairs for name in pair]
    _check_models(compared, under_test, "--compare", "models under test")


def _report(asked: ReportOptions) -> None:
    """The options checked, each `simulators validate` folder's page written, then the runs
    merged, analysed and reported in the format asked; notes and warnings told on stderr."""
    from attunebench.analysis import Options, RunLoadError, build_summary, load_runs
    from attunebench.report.render import write_report

    compared = _pairs(asked.compare or [])
    if asked.fmt not in FORMATS:
        raise typer.BadParameter(f"must be one of {', '.join(FORMATS)}", param_hint="--format")
    if asked.cluster not in ("conversation", "participant"):
        raise typer.BadParameter("must be conversation or participant", param_hint="--cluster")
    folder_out(asked.out_dir)
    simulated = [folder for folder in asked.rundirs if (folder / SIMULATORS_FILE).is_file()]
    rundirs = [folder for folder in asked.rundirs if folder not in simulated]
    _simulators_pages(simulated, asked.out_dir)
    if not rundirs:
        return
    try:
        runs = load_runs(rundirs, dataset=asked.data, allow_mixed_datasets=asked.allow_mixed_data)
        _check_compared(runs, compared, asked.include_simulated)
        options = Options(
            seed=asked.seed,
            resamples=asked.resamples,
            include_simulated=asked.include_simulated,
            all_items=asked.all_items,
            cluster="participant" if asked.cluster == "participant" else "conversation",
            train=asked.train,
            differences=compared,
        )
        summary = build_summary(runs, options)
    except (RunLoadError, ValueError) as error:
        fail(str(error))
    try:
        written = write_report(summary, asked.out_dir, asked.fmt)
    except OSError as error:  # a disk that filled up while it was written
        fail(os_problem(error))
    shown = (
        "dataset_unavailable",
        "mixed_datasets",
        "duplicate_records",
        "incomplete_run",
        "too_few_conversations",
        "no_scored_items",
    )
    for line in summary.provenance.banner:
        err.print(f"note: {line}", markup=False, highlight=False)
    for note in summary.warnings:
        if note.kind in shown:
            err.print(f"warning: {note.message}", markup=False, highlight=False)
    out.print(
        f"{len(runs.records)} records, {len(summary.tasks)} tasks, "
        f"{len(summary.provenance.models)} models; {len(summary.warnings)} warnings "
        "(listed in the report)"
    )
    if summary.differences:
        out.print(_differences_table(summary))
    for path in written:
        out.print(f"wrote {path}", markup=False, highlight=False)


def _differences_table(summary: Summary) -> Table:
    """`--compare`'s pairs per task, as the report's page shows them."""
    from attunebench.report.differences import computed_from, difference_lines
    from attunebench.report.render import gold_givers

    table = Table(title="Model differences, same items (A − B, 95% paired interval)")
    table.caption = computed_from(summary)
    columns = ("task", "headline", "A − B", "headlines", "difference", "95% interval")
    numbers = ("headlines", "difference", "items", f"{summary.settings.cluster}s")
    for column in (*columns, "items", f"{summary.settings.cluster}s", "gold given by"):
        table.add_column(column, justify="right" if column in numbers else "left")
    for d in difference_lines(summary, gold_givers(summary)):
        cells = (d.task, f"{d.metric} ({d.variant})", d.pair, d.sides, d.difference, d.interval)
        # Text, not markup: model and task names come from the runs
        table.add_row(*(Text(c) for c in (*cells, str(d.n), str(d.clusters), d.gold)))
    return table


def _simulators_pages(folders: list[Path], out_dir: Path) -> None:
    """The page of each `simulators validate` folder (named after it where there are several)."""
    from attunebench.report.simulators import PAGE, write_simulators_page
    from attunebench.simulators.schema import SimulatorsFileError, read_simulators

    for folder in folders:
        name = PAGE if len(folders) == 1 else f"simulators-{folder.name}.html"
        try:
            written = write_simulators_page(read_simulators(folder), out_dir, name)
        except SimulatorsFileError as error:
            fail(str(error))
        out.print(f"wrote {written}", markup=False, highlight=False)


def power(
    rundir: Annotated[list[Path], typer.Argument(help="Pilot run directories (merged).")],
    models: Annotated[tuple[str, str], typer.Option(help="The two models to separate.")],
    tasks: Annotated[
        list[str] | None, typer.Option("--tasks", help="Tasks (repeat or comma-separate).")
    ] = None,
    seed: Seed = 0,
    simulations: Annotated[int, typer.Option(help="Simulated studies per size.", min=50)] = (
        SIMULATIONS
    ),
    data: MovedData = None,
) -> None:
    """Conversations needed to separate two models on each task's headline at 80% power
    (the report's paired difference and its 95% interval): a central figure and a range."""
    if models[0] == models[1]:
        fail(f"--models names {models[0]} twice: give the two models to separate")
    import numpy as np

    from attunebench.analysis import RunLoadError, load_runs, power_curve
    from attunebench.analysis.comparisons.power import Settings
    from attunebench.analysis.judges.audit import audits_judges

    try:
        runs = load_runs(rundir, dataset=data)
    except RunLoadError as error:
        fail(str(error))
    frame = runs.frame
    _check_models(list(models), list(frame.models), "--models", "models")
    chosen = [t for entry in tasks or [] for t in entry.split(",") if t]
    _check_models(chosen, list(frame.tasks), "--tasks", "tasks")
    rng = np.random.default_rng(seed)
    settings = Settings(simulations=simulations)
    curves = [
        power_curve(runs, task, *models, rng=rng, settings=settings)
        for task in chosen or [t for t in frame.tasks if not audits_judges(t)]
    ]
    out.print(_summary_table(models, curves))
    out.print(_curve_table(curves))
    for curve in curves:
        out.print(f"{curve.task}: {curve.note}", markup=False, highlight=False)


def _summary_table(models: tuple[str, str], curves: list[PowerCurve]) -> Table:
    title = f"{models[0]} minus {models[1]}: conversations for 80% power (alpha 0.05)"
    table = Table(title=title)
    columns = ("task", "headline", "pilot conversations", "difference [95% interval]")
    for column in (*columns, "needed", "range"):
        table.add_column(column, justify="left" if column in ("task", "headline") else "right")
    for c in curves:
        shown = "—"
        if c.difference is not None and c.ci_low is not None and c.ci_high is not None:
            shown = f"{c.difference:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}]"
        elif c.difference is not None:
            shown = f"{c.difference:+.3f}"
        table.add_row(
            c.task,
            c.metric or "—",
            str(c.pilot_conversations),
            shown,
            "—" if c.needed is None else f"about {c.needed:,}",
            c.range or "—",
        )
    return table


def _curve_table(curves: list[PowerCurve]) -> Table:
    from attunebench.analysis.comparisons.power import DEFAULT_SIZES

    table = Table(title="Power by number of conversations")
    table.add_column("conversations", justify="right")
    for c in curves:
        table.add_column(c.task, justify="right")
    for n in DEFAULT_SIZES:
        cells = [dict(zip(c.sizes, c.power, strict=True)).get(n) for c in curves]
        table.add_row(str(n), *("—" if p is None else f"{p:.2f}" for p in cells))
    return table


report = command_of(ReportOptions, _report)
