"""`attunebench data import ...`: one subcommand per corpus, plus generic CSV."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import replace
from inspect import Parameter
from pathlib import Path
from typing import Annotated, Any, Literal, get_type_hints

import typer
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from attunebench.cli.consoles import CommandConsole, command_group
from attunebench.cli.errors import fail, file_out, os_problem
from attunebench.cli.options import CorpusFolder, ImportOut, Limit, UserSpeaker, parameters_of
from attunebench.data.importers import (
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
# `--split` of the corpora imported with their train split, and of those imported without it.
Split = Annotated[Literal["train", "valid", "test", "all"], typer.Option()]
HeldOutSplit = Annotated[Literal["valid", "test", "all"], typer.Option()]
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


def _corpus(corpus: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A `data import` command for the importer registered as `corpus`: the decorated function
    gives its help and the importer's options (its parameters); where to read and write, and
    `--limit`, are every corpus command's, declared once in `_importing`."""

    def made(options: Callable[..., None]) -> Callable[..., None]:
        def command(*, out: Path, src: Path | None, limit: int | None, **chosen: Any) -> None:
            _run(corpus, importers.get(corpus)(**chosen), src, out, limit)

        hints = get_type_hints(options, include_extras=True)
        own = [
            parameter.replace(kind=KEYWORD, annotation=hints[parameter.name])
            for parameter in inspect.signature(options).parameters.values()
        ]
        command.__doc__, command.__name__ = options.__doc__, options.__name__
        return _importing(
            command, Parameter("src", KEYWORD, default=None, annotation=CorpusFolder), own
        )

    return made


@app.command()
@_corpus("esconv")
def esconv(
    variant: Annotated[
        Literal["hf", "failed", "multiesc"],
        typer.Option(
            help="hf: the HF splits; failed: FailedESConv.json; "
            "multiesc: valid/test with MultiESC's seeker feedback."
        ),
    ] = "hf",
    split: Split = "all",
) -> None:
    """ESConv support chats: supporters' own strategy labels, the seeker's survey and feedback."""


@app.command()
@_corpus("dailydialog")
def dailydialog(split: HeldOutSplit = "all") -> None:
    """DailyDialog: the first speaker is the user; annotators' emotions and dialogue acts."""


@app.command()
@_corpus("meld")
def meld(split: Split = "all", user_speaker: UserSpeaker = None) -> None:
    """MELD (Friends): one speaker is the user, the others' lines are the reply; emotions."""


@app.command()
@_corpus("uss")
def uss(
    part: Annotated[
        Literal["mwoz", "redial", "all"], typer.Option(help="MultiWOZ, ReDial or both.")
    ] = "all",
) -> None:
    """USS: annotators' 1-5 satisfaction rates the system reply before each user turn."""


@app.command()
@_corpus("goemotions")
def goemotions(split: HeldOutSplit = "all") -> None:
    """GoEmotions: each Reddit comment is a one-turn conversation with raters' emotions."""


@app.command("empathy-mental-health")
@_corpus("empathy_mental_health")
def empathy_mental_health() -> None:
    """EPITOME's Reddit replies: annotators' empathy levels (reactions, interpretations,
    explorations) as each reply's behaviors."""


@app.command()
@_corpus("convai1")
def convai1(
    variant: Annotated[
        Literal["human-bot", "human-human"],
        typer.Option(
            help="human-bot: a volunteer and a chatbot; human-human: two volunteers, each chat "
            "from both sides. Never mixed."
        ),
    ] = "human-bot",
    split: Annotated[Literal["train", "test", "all"], typer.Option()] = "all",
) -> None:
    """ConvAI1 (2017): each person's own thumbs on their partner's messages and their 1-5
    ratings of the dialogue."""


@app.command("topical-chat")
@_corpus("topical_chat")
def topical_chat(
    split: Annotated[
        Literal["valid_freq", "valid_rare", "test_freq", "test_rare", "all"], typer.Option()
    ] = "all",
    perspective: Annotated[
        Literal["agent_1", "agent_2", "both"],
        typer.Option(help="Whose side each chat is read from (both: two conversations a chat)."),
    ] = "both",
) -> None:
    """Topical-Chat (valid/test): each writer's own emotion label on every message, the
    receiver's rating of it, and each worker's rating of the conversation."""


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
