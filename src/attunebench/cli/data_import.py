"""`attunebench data import ...`: one subcommand per corpus, plus generic CSV."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from inspect import Parameter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from attunebench.cli.consoles import CommandConsole, command_group
from attunebench.cli.errors import fail, file_out, os_problem
from attunebench.cli.options import CorpusFolder, ImportOut, Limit, UserSpeaker, parameters_of
from attunebench.data.importers import (
    CORPORA,
    CsvImporter,
    Importer,
    ImportFormatError,
    ImportOptionError,
    import_to_file,
    importers,
)
from attunebench.data.jsonl import iter_conversations
from attunebench.data.locations import corpus_dir, missing_corpus
from attunebench.data.schema import Taxonomy
from attunebench.data.taxonomy import UnknownTaxonomyError

app = command_group("Import a real corpus into attunebench/v1 JSON Lines.")
# Messages name file:line; soft wrapping keeps them whole for editors and grep.
console = CommandConsole(soft_wrap=True)
errors = CommandConsole(stderr=True, soft_wrap=True)
CsvFile = Annotated[Path, typer.Argument(help="The CSV (or, with --delimiter, TSV) file.")]
KEYWORD = Parameter.KEYWORD_ONLY


def _run(corpus: str, importer: Importer, src: Path | None, out: Path, limit: int | None) -> None:
    file_out(out)
    source = src if src is not None else corpus_dir(corpus)
    if not source.exists():
        fail(f"{source}: not found" if src is not None else missing_corpus(corpus), 1)
    progress = Progress(
        SpinnerColumn(),
        TextColumn("importing {task.description}: {task.completed} conversations"),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
        disable=not errors.is_terminal,
    )
    with progress:
        task = progress.add_task(escape(corpus), total=limit)
        try:
            result = import_to_file(
                importer, source, out, limit=limit, on_conversation=lambda _: progress.advance(task)
            )
        except (ImportFormatError, ImportOptionError, UnknownTaxonomyError, OSError) as error:
            progress.stop()
            said = os_problem(error) if isinstance(error, OSError) else str(error)
            errors.print(f"[red]error:[/] {escape(said)}")
            errors.print(f"nothing written to {escape(str(out))}")
            raise typer.Exit(1) from None
    console.print(f"wrote {result.written} conversations to {escape(str(out))}")
    for heading, counts in (
        ("not imported", result.dropped()),
        ("warning", result.warnings()),
        ("note", result.notes()),
    ):
        for what, count in counts.items():
            console.print(f"  {heading}: {count} {escape(what)}")


def _importing(
    command: Callable[..., None], src: Parameter, own: list[Parameter]
) -> Callable[..., None]:
    """`command` with its `own` options, beside where to read (`src`) and write and `--limit`,
    which every import command takes."""
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            Parameter("out", KEYWORD, annotation=ImportOut),
            src,
            *own,
            Parameter("limit", KEYWORD, default=None, annotation=Limit),
        ]
    )
    return command


def _corpus(corpus: str) -> Callable[..., None]:
    """A `data import` command for the importer registered as `corpus`: its docstring is the
    help, its fields the options (declared there, with their help); where to read and write,
    and `--limit`, are every corpus command's, declared once in `_importing`."""
    importer = importers.get(corpus)

    def command(*, out: Path, src: Path | None, limit: int | None, **chosen: Any) -> None:
        _run(corpus, importer(**chosen), src, out, limit)

    command.__doc__ = importer.__doc__
    return _importing(
        command,
        Parameter("src", KEYWORD, default=None, annotation=CorpusFolder),
        parameters_of(importer, user_speaker=UserSpeaker),
    )


for corpus in CORPORA:
    app.command(corpus.replace("_", "-"))(_corpus(corpus))


def _csv(*, out: Path, src: Path, limit: int | None, **chosen: Any) -> None:
    """Any utterance-per-row corpus: rows of a conversation together, one speaker the user."""
    importer = CsvImporter(**chosen)
    # `--delimiter` is one character: `\t` as typed, and `tab`, name a tab
    delimiter = {"\\t": "\t", "tab": "\t"}.get(importer.delimiter.lower(), importer.delimiter)
    if len(delimiter) != 1:
        fail(f"--delimiter {delimiter!r} is not one character")
    _run(src.stem, replace(importer, delimiter=delimiter), src, out, limit)
    if importer.taxonomy_from_data:
        _write_taxonomy_beside(out)


# The importer's fields are the options: declared there, with their help (data/ is typer-free).
app.command("csv")(
    _importing(
        _csv,
        Parameter("src", KEYWORD, annotation=CsvFile),
        parameters_of(CsvImporter, user_speaker=UserSpeaker),
    )
)


def _write_taxonomy_beside(out: Path) -> None:
    """The built taxonomy as a file, so the corpus's other splits can be imported onto it."""
    first = next(iter_conversations(out), None)
    if first is None or not isinstance(first.taxonomy, Taxonomy):
        return
    path = out.with_suffix(".taxonomy.json")
    path.write_text(first.taxonomy.model_dump_json(indent=2) + "\n", encoding="utf-8")
    console.print(f"taxonomy {escape(first.taxonomy.id)} written to {escape(str(path))}")
