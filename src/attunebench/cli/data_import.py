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
from attunebench.cli.options import CorpusFolder, ImportOut, Limit, UserSpeaker
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


def _corpus(corpus: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A `data import` command for the importer registered as `corpus`: the decorated function
    gives its help and the importer's options (its parameters); where to read and write, and
    `--limit`, are every corpus command's, declared here once."""

    def made(options: Callable[..., None]) -> Callable[..., None]:
        def command(*, out: Path, src: Path | None, limit: int | None, **chosen: Any) -> None:
            _run(corpus, importers.get(corpus)(**chosen), src, out, limit)

        hints = get_type_hints(options, include_extras=True)
        own = [
            parameter.replace(kind=Parameter.KEYWORD_ONLY, annotation=hints[parameter.name])
            for parameter in inspect.signature(options).parameters.values()
        ]
        command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                Parameter("out", Parameter.KEYWORD_ONLY, annotation=ImportOut),
                Parameter("src", Parameter.KEYWORD_ONLY, default=None, annotation=CorpusFolder),
                *own,
                Parameter("limit", Parameter.KEYWORD_ONLY, default=None, annotation=Limit),
            ]
        )
        command.__doc__, command.__name__ = options.__doc__, options.__name__
        return command

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


@app.command("csv")
def csv_command(
    src: Annotated[Path, typer.Argument(help="The CSV (or, with --delimiter, TSV) file.")],
    out: ImportOut,
    conversation_col: Annotated[
        list[str], typer.Option(help="Column naming the conversation; repeat for a composite key.")
    ],
    speaker_col: Annotated[str, typer.Option(help="Column naming the speaker.")],
    text_col: Annotated[str, typer.Option(help="Column holding the utterance.")],
    emotion_col: Annotated[
        str | None, typer.Option(help="User rows: the user's emotion label(s).")
    ] = None,
    behavior_col: Annotated[
        str | None, typer.Option(help="Reply rows: the reply's behavior label(s).")
    ] = None,
    rating_col: Annotated[
        str | None,
        typer.Option(
            help="Reply rows: its rating; user rows: rates the replies since the last one."
        ),
    ] = None,
    order_col: Annotated[
        str | None, typer.Option(help="Numeric column ordering rows in a conversation.")
    ] = None,
    annotator_col: Annotated[
        str | None,
        typer.Option(help="Column naming the annotator, where several labelled each utterance."),
    ] = None,
    keep_duplicate_rows: Annotated[
        bool,
        typer.Option(
            "--keep-duplicate-rows",
            help="Keep rows repeating another's --order-col value as utterances of their own "
            "(without it they are an error: several annotators' rows need --annotator-col).",
        ),
    ] = False,
    annotator_merge: Annotated[
        Literal["majority", "union", "first"],
        typer.Option(help="How annotators' labels of one utterance merge."),
    ] = "majority",
    context_col: Annotated[
        list[str] | None,
        typer.Option(
            help="Conversation-level column: COL (into context.labels), or topic=COL, "
            "situation=COL, emotion=COL; repeat."
        ),
    ] = None,
    user_speaker: UserSpeaker = None,
    taxonomy: Annotated[
        str, typer.Option(help="Shipped taxonomy id, or a taxonomy FILE.json (carried inline).")
    ] = "attunebench-default",
    taxonomy_from_data: Annotated[
        bool,
        typer.Option(
            "--taxonomy-from-data",
            help="Build the taxonomy from the corpus's own labels (inline, and beside --out).",
        ),
    ] = False,
    label_map: Annotated[
        Path | None,
        typer.Option(help="JSON mapping the corpus's labels onto the taxonomy's."),
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="Source name and id prefix (default: file stem).")
    ] = None,
    license: Annotated[str | None, typer.Option(help="The corpus licence, as stated.")] = None,
    provenance: Annotated[
        list[str] | None,
        typer.Option(
            help="Who gave the labels: WHO for all, or FIELD=WHO (state, behaviors, rating, "
            "context.emotion, outcome); WHO is first-person, actor, third-party, machine, "
            "derived, ..."
        ),
    ] = None,
    rating_low: Annotated[
        float | None,
        typer.Option(help="Lowest rating on the scale (default: the rating column's lowest)."),
    ] = None,
    rating_high: Annotated[
        float | None,
        typer.Option(help="Highest rating on the scale (default: the rating column's highest)."),
    ] = None,
    outcome_col: Annotated[
        list[str] | None,
        typer.Option(
            help="FIELD=COL: the person's answer after the conversation, one value per "
            "conversation; FIELD is rating (their rating of the whole conversation) or a "
            "survey name. Repeat.",
        ),
    ] = None,
    outcome_scale: Annotated[
        list[str] | None,
        typer.Option(
            help="FIELD=LOW:HIGH: an --outcome-col field's scale (bounds may be negative); "
            "without it, the range its values span. Repeat.",
        ),
    ] = None,
    outcome_map: Annotated[
        list[str] | None,
        typer.Option(
            help="FIELD=FILE.json: a JSON object mapping an --outcome-col field's words to "
            'numbers ({"Slightly satisfied": 4, ...}); its range is the scale. Repeat.',
        ),
    ] = None,
    partner: Annotated[
        Literal["person", "model"] | None,
        typer.Option(
            help="Who the other side of every chat is: person or model (context.labels.partner)."
        ),
    ] = None,
    label_sep: Annotated[str, typer.Option(help="Separator between labels in one cell.")] = ",",
    delimiter: Annotated[
        str, typer.Option(help="Field delimiter (TSV: $'\\t', '\\t' or tab).")
    ] = ",",
    limit: Limit = None,
) -> None:
    """Any utterance-per-row corpus: rows of a conversation together, one speaker the user."""
    # locals() is every parameter: the importer's fields, and where to read, write and stop
    options = dict(locals())
    src, out, limit = options.pop("src"), options.pop("out"), options.pop("limit")
    _import_csv(_csv_importer(options), src, out, limit)


# A repeatable option is named for one value, the importer's field for all of them.
_REPEATED = {
    "context_col": "context_cols",
    "outcome_col": "outcome_cols",
    "outcome_scale": "outcome_scales",
    "outcome_map": "outcome_maps",
}


def _csv_importer(options: dict[str, Any]) -> CsvImporter:
    """`data import csv`'s options as the importer's fields: a repeatable option's values as a
    tuple (empty where none is given), the label map's path as text."""
    fields = {_REPEATED.get(name, name): value for name, value in options.items()}
    for name in ("conversation_col", "provenance", *_REPEATED.values()):
        fields[name] = tuple(fields[name] or ())
    if fields["label_map"] is not None:
        fields["label_map"] = str(fields["label_map"])
    return CsvImporter(**fields)


def _import_csv(importer: CsvImporter, src: Path, out: Path, limit: int | None) -> None:
    """`data import csv` once its options are read: `--delimiter` spelled as one character
    (`\\t` and `tab` name a tab), the import, and a built taxonomy written beside `--out`."""
    delimiter = {"\\t": "\t", "tab": "\t"}.get(importer.delimiter.lower(), importer.delimiter)
    if len(delimiter) != 1:
        fail(f"--delimiter {delimiter!r} is not one character")
    _run(src.stem, replace(importer, delimiter=delimiter), src, out, limit)
    if importer.taxonomy_from_data:
        _write_taxonomy_beside(out)


def _write_taxonomy_beside(out: Path) -> None:
    """The built taxonomy as a file, so the corpus's other splits can be imported onto it."""
    first = next(iter_conversations(out), None)
    if first is None or not isinstance(first.taxonomy, Taxonomy):
        return
    path = out.with_suffix(".taxonomy.json")
    path.write_text(first.taxonomy.model_dump_json(indent=2) + "\n", encoding="utf-8")
    console.print(f"taxonomy {escape(first.taxonomy.id)} written to {escape(str(path))}")
