"""`attunebench data ...`: schema, validate, stats, import, export, convert, fetch."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from enum import StrEnum
from itertools import islice
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from attunebench.cli.consoles import CommandConsole, command_group
from attunebench.cli.data_fetch import fetch
from attunebench.cli.data_import import app as import_app
from attunebench.cli.errors import fail, file_out, folder_out, os_problem
from attunebench.cli.options import MaxLineBytes, Seed, ValidFile
from attunebench.data.jsonl import write_conversations
from attunebench.data.repeats import Repeat, repeats
from attunebench.data.schema import Conversation
from attunebench.data.stats import DatasetStats, StatsBuilder
from attunebench.data.validate import (
    DEFAULT_MAX_LINE_BYTES,
    DatasetError,
    FileReport,
    Problem,
    load_validated,
    validate_file,
)
from attunebench.tasks import load_tasks
from attunebench.tasks.helpers.gold_stats import TaskGold

app = command_group("Inspect, validate, import and export attunebench/v1 datasets.")
console = CommandConsole()
app.add_typer(import_app, name="import")
app.command("fetch")(fetch)

SHOW_DEFAULT = 50
FIX_FIRST = "; fix them first (attunebench data validate)"


def _print_problems(problems: Iterable[Problem], total: int, show: int) -> None:
    shown = list(islice(problems, show))
    for problem in shown:
        typer.echo(str(problem))  # plain text: field paths like responses[0] are not markup
    if total > len(shown):
        typer.echo(f"... and {total - len(shown)} more problems")


def _invalid(report: FileReport, advice: str = "") -> NoReturn:
    """Stop on a dataset that failed validation: its first problems, then its summary line."""
    _print_problems(report.problems, report.problem_count, SHOW_DEFAULT)
    typer.echo(report.summary() + advice)
    raise typer.Exit(1)


@app.command()
def schema() -> None:
    """Print the JSON Schema of one attunebench/v1 conversation record."""
    print(json.dumps(Conversation.model_json_schema(), indent=2))


@app.command()
def validate(
    files: Annotated[list[Path], typer.Argument(help="JSON Lines files to check.")],
    max_line_bytes: MaxLineBytes = DEFAULT_MAX_LINE_BYTES,
    show: Annotated[int, typer.Option(min=0, help="How many problems to print.")] = SHOW_DEFAULT,
) -> None:
    """Check files against attunebench/v1; print every problem as FILE:LINE: WHERE: WHAT,
    and warn of runs of identical turns or lines (a corpus imported once per annotator)."""
    found: list[tuple[Path, Repeat]] = []

    def check(file: Path) -> FileReport:
        def on_valid(conversation: Conversation) -> None:
            found.extend((file, run) for run in repeats(conversation))

        return validate_file(file, max_line_bytes=max_line_bytes, on_valid=on_valid)

    reports = [check(f) for f in files]
    problems = [p for r in reports for p in r.problems]
    total = sum(r.problem_count for r in reports)
    _print_problems(problems, total, show)
    for file, run in found[:show]:
        typer.echo(f"warning: {file}: {run}")
    if found:
        typer.echo(
            f"{len(found)} runs of identical turns or lines: several annotators' rows of one "
            "utterance? (data import csv --annotator-col merges them)"
            if any(run.annotators for _, run in found)
            else f"{len(found)} runs of identical turns, none labelled (no annotator's): a "
            "person or a bot repeating itself, or rows written twice?"
        )
    for report in reports:
        typer.echo(report.summary())
    if total:
        raise typer.Exit(1)


@app.command()
def stats(
    file: Annotated[Path, typer.Argument(help="A JSON Lines file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    max_line_bytes: MaxLineBytes = DEFAULT_MAX_LINE_BYTES,
) -> None:
    """Sizes, label distributions and how many items carry each task's gold."""
    builder, gold = StatsBuilder(), TaskGold([load_tasks().get(name)() for name in load_tasks()])

    def add(conversation: Conversation) -> None:
        builder.add(conversation)
        gold.add(conversation)

    report = validate_file(file, max_line_bytes=max_line_bytes, on_valid=add)
    if not report.ok:
        _invalid(report, FIX_FIRST)
    result = builder.build()
    if as_json:
        print(gold.stats(result).model_dump_json(indent=2))
    else:
        _print_stats(str(file), result, gold)


_NUMERIC = {"count", "items", "share", "turns"}


def _table(title: str, rows: Iterable[tuple[object, ...]], *columns: str) -> None:
    console.print(f"\n[bold]{escape(title)}[/bold]")
    table = Table(show_edge=False, header_style="dim")
    for column in columns:
        table.add_column(column, justify="right" if column in _NUMERIC else "left")
    for row in rows:
        table.add_row(*(escape(str(cell)) for cell in row))
    console.print(table)


def _share(counts: dict[str, int] | dict[int, int], total: int) -> list[tuple[object, ...]]:
    return [(k, v, f"{v / total:.0%}" if total else "-") for k, v in counts.items()]


def _who(counts: dict[str, int]) -> str:
    """Who gave a kind of gold: one provenance, or each with its number of items."""
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{who} {n}" for who, n in counts.items()) or "-"


def _print_stats(name: str, s: DatasetStats, gold: TaskGold) -> None:
    overview = [
        ("conversations", s.conversations),
        ("turns", s.turns),
        ("responses", s.responses),
        ("participants", s.participants),
        ("rated responses", s.rated_responses),
        *((f"source {k}", v) for k, v in s.sources.items()),
        *((f"taxonomy {k}", v) for k, v in s.taxonomies.items()),
    ]
    _table(name, overview, "", "count")
    rows = [
        (
            task.name,
            gold.items[task.name],
            _who(dict(gold.items_given.get(task.name, Counter()).most_common())),
        )
        for task in gold.tasks
    ]
    _table("Gold per task", rows, "task", "items", "given by")
    _table("State coverage", _share(s.coverage.model_dump(), s.turns), "scale", "turns", "share")
    for title, counts, total in (
        ("Emotions (share of turns with a state)", s.emotions, s.turns_with_state),
        ("Primary emotion", s.primary, s.turns_with_state),
        ("Behaviors (share of labelled replies)", s.behaviors, s.responses_with_behaviors),
        ("Wanted behaviors", s.wanted_behaviors, s.turns_with_wanted_behaviors),
        ("Context emotion", s.context_emotions, sum(s.context_emotions.values())),
        ("Position of the chosen reply", s.pick_position, sum(s.pick_position.values())),
        ("Chosen reply by model", s.picks_by_model, sum(s.picks_by_model.values())),
        ("Pick strength", s.pick_strength, sum(s.pick_strength.values())),
    ):
        if counts:
            _table(title, _share(counts, total), "label", "count", "share")
    for trait, values in s.traits.items():
        _table(
            f"Participants by {trait}", _share(values, s.participants), "value", "count", "share"
        )


@app.command("split")
def split_command(
    file: ValidFile,
    train: Annotated[float, typer.Option(help="The share of conversations for train.")] = 0.8,
    seed: Seed = 0,
    stratify: Annotated[
        str | None,
        typer.Option(help="A field (context.emotion, participant.traits.X) to split by value."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Prefix of the two files (default: FILE without .jsonl)."),
    ] = None,
) -> None:
    """Split whole conversations into PREFIX.train.jsonl and PREFIX.test.jsonl (seeded)."""
    from attunebench.data.split import SplitError, split

    prefix = out if out is not None else file.with_suffix("")
    paths = (
        prefix.with_name(prefix.name + ".train.jsonl"),
        prefix.with_name(prefix.name + ".test.jsonl"),
    )
    for path in paths:
        file_out(path)
    try:
        made = split(load_validated(file), train, seed, stratify)
    except DatasetError as exc:
        _invalid(exc.report, FIX_FIRST)
    except SplitError as exc:
        fail(str(exc))
    _run_io(lambda: write_conversations(paths[0], made.train))
    _run_io(lambda: write_conversations(paths[1], made.test))
    typer.echo(
        f"wrote {len(made.train)} conversations to {paths[0]} and {len(made.test)} to {paths[1]}"
    )
    if stratify:
        for value, (to_train, to_test) in made.strata.items():
            typer.echo(f"  {stratify} = {value}: {to_train} train, {to_test} test")


class ExportFormat(StrEnum):
    parquet = "parquet"
    hf = "hf"


@app.command()
def export(
    file: ValidFile,
    to: Annotated[ExportFormat, typer.Option("--to", help="parquet, or a `datasets` folder (hf).")],
    out: Annotated[Path, typer.Option("--out", help="Output file (parquet) or new folder (hf).")],
) -> None:
    """Export a dataset to Parquet or to a Hugging Face `datasets` folder (save_to_disk)."""
    (folder_out if to is ExportFormat.hf else file_out)(out)

    def write() -> int:
        from attunebench.data.parquet import export_hf, jsonl_to_parquet

        return (export_hf if to is ExportFormat.hf else jsonl_to_parquet)(file, out)

    count = _run_io(write)
    typer.echo(f"wrote {count} conversations to {out} ({to.value})")


@app.command()
def convert(
    source: Annotated[Path, typer.Argument(help="A Parquet file or a `datasets` folder.")],
    out: Annotated[Path, typer.Option("--out", help="The JSON Lines file to write.")],
) -> None:
    """Convert an exported Parquet file or `datasets` folder back to JSON Lines, checking it."""
    file_out(out)

    def read() -> int:
        from attunebench.data.parquet import hf_to_jsonl, parquet_to_jsonl

        return (hf_to_jsonl if source.is_dir() else parquet_to_jsonl)(source, out)

    count = _run_io(read)
    typer.echo(f"wrote {count} conversations to {out}")


def _run_io(action: Callable[[], int]) -> int:
    try:
        return action()
    except DatasetError as exc:
        _invalid(exc.report)
    except OSError as exc:
        typer.echo(f"error: {os_problem(exc)}", err=True)
    except ImportError as exc:
        # pyarrow (Parquet) and datasets (hf folders) are extras, not core dependencies.
        extra = "hub" if (exc.name or "").startswith("datasets") else "parquet"
        typer.echo(f"error: {exc.name or exc} is needed here (pip install 'attunebench[{extra}]')")
    raise typer.Exit(1)
