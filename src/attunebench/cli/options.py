"""The options several commands take, each declared once: flag, type, bounds and help.

A command writes `seed: Seed = 0`; the default stays beside the parameter, where typer reads it.
Options of one command only stay in that command's signature, or on the fields of the
dataclass `command_of` makes the command from (`parameters_of` reads them).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_args, get_origin, get_type_hints

import typer

from attunebench.data.locations import DATA_DIR_VARIABLE

T = TypeVar("T")

# The analysis default, repeated so the CLI starts without importing it (a test compares them).
RESAMPLES = 2000  # analysis.bootstrap.DEFAULT_RESAMPLES

Seed = Annotated[int, typer.Option(help="Seed of every random choice.")]
Resamples = Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")]
MovedData = Annotated[
    Path | None,
    typer.Option(help="The dataset file, if it moved since the run (texts, traits, sources)."),
]
Limit = Annotated[int | None, typer.Option(min=1, help="Only the first N conversations.")]
IncludeSimulated = Annotated[
    bool, typer.Option(help="Count the runs' sim/ models as models under test.")
]

# Commands that call models: `run` and `simulators validate`.
ModelsFile = Annotated[Path | None, typer.Option("--models-file", help="TOML file naming models.")]
Cache = Annotated[
    Path | None, typer.Option(help="The response cache (default: the user cache folder).")
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not use the cache.")]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="No progress bar.")]

# `data ...`
MaxLineBytes = Annotated[
    int, typer.Option("--max-line-bytes", min=1, help="Longest line accepted, in bytes.")
]
ValidFile = Annotated[Path, typer.Argument(help="A valid JSON Lines file.")]

# `data import ...`
CorpusFolder = Annotated[
    Path | None,
    typer.Argument(
        help=f"The corpus folder (default: the first holding it of ${DATA_DIR_VARIABLE}, "
        "the user's data folder and ../shared/data; see `attunebench data fetch`)."
    ),
]
ImportOut = Annotated[
    Path, typer.Option("--out", "-o", help="The JSON Lines file to write (replaced atomically).")
]
UserSpeaker = Annotated[
    str | None, typer.Option(help="Speaker who is the user (default: each conversation's first).")
]

# `collect ...`
DbUrl = Annotated[
    str,
    typer.Option(
        "--db",
        envvar="ATTUNEBENCH_COLLECT_DATABASE_URL",
        help="SQLAlchemy URL: sqlite:///file.db or postgresql+psycopg://...",
    ),
]
BaseUrl = Annotated[
    str | None,
    typer.Option(
        help="Where the app is reachable (default: where `collect serve` last listened, "
        "else http://127.0.0.1:8000)."
    ),
]


def command_of(options: type[T], action: Callable[[T], None]) -> Callable[..., None]:
    """A command whose parameters are the fields of the dataclass `options` (its docstring the
    help): typer reads each option where it is declared, and `action` gets them as one value."""

    def command(**given: Any) -> None:
        action(options(**given))

    command.__signature__ = inspect.Signature(parameters_of(options))  # type: ignore[attr-defined]
    command.__doc__ = options.__doc__
    return command


def parameters_of(options: type, **shared: Any) -> list[inspect.Parameter]:
    """The fields of the dataclass `options` as keyword parameters, each annotated as declared,
    or with one of the options above that `shared` names for it. A field whose metadata is its
    help alone (`Annotated[T, "help"]`, written where typer must not be imported: data/) is
    that option, a bool one a flag with no --no- form."""
    hints = get_type_hints(options, include_extras=True)
    return [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if field.default is MISSING else field.default,
            annotation=shared.get(field.name) or _typer_hint(field.name, hints[field.name]),
        )
        for field in fields(options)
    ]


def _typer_hint(name: str, hint: Any) -> Any:
    if get_origin(hint) is not Annotated or not isinstance(get_args(hint)[1], str):
        return hint
    kind, help_text = get_args(hint)[:2]
    flag = [f"--{name.replace('_', '-')}"] if kind is bool else []
    return Annotated[kind, typer.Option(*flag, help=help_text)]
