"""What every importer shares: the protocol, the error that names file, line and field, and
small helpers for labels and records. An importer yields conversations lazily (a limit stops
the parsing early) and counts what it saw in a `Tally`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from attunebench.data.schema import Conversation, Taxonomy
from attunebench.data.schema_errors import field_path
from attunebench.data.taxonomy import normalise_label
from attunebench.frozen import problem_text

Tally = Counter[str]
"""Counts keyed `what:value`, e.g. `utterances:usr`, `strategy:Question`; `dropped:`, `warning:`
and `note:` keys are what the command line reports after an import."""

LabelKind = Literal["emotions", "behaviors"]
# `--split` of the corpora imported with their train split, and of those imported without it.
Split = Literal["train", "valid", "test", "all"]
HeldOutSplit = Literal["valid", "test", "all"]

RawT = TypeVar("RawT", bound=BaseModel)
JsonT = TypeVar("JsonT", list[Any], dict[str, Any])


class Raw(BaseModel):
    """A corpus record as the corpus writes it: typed where we read, tolerant of the rest."""

    model_config = ConfigDict(frozen=True, extra="ignore")


class Importer(Protocol):
    """A configured importer: options are its fields, `read` does the work."""

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]: ...


@dataclass(frozen=True)
class Location:
    """Where in a corpus something is: a file, and a line or an item within it."""

    path: Path
    line: int | None = None
    item: str | None = None

    def __str__(self) -> str:
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
        if self.item is not None:
            where += f": {self.item}"
        return where


class ImportFormatError(ValueError):
    """The corpus is not what the importer expects; says where and in which field."""

    def __init__(self, location: Location, field: str, problem: str) -> None:
        super().__init__(f"{location}: {field}: {problem}")
        self.location = location
        self.field = field
        self.problem = problem


class ImportOptionError(ValueError):
    """The options asked for something the corpus does not have (a split, a file, a column)."""


def choose(option: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ImportOptionError(f"{option} {value!r} is not one of: {', '.join(allowed)}")
    return value


def splits_for(split: str, allowed: Sequence[str], option: str = "split") -> tuple[str, ...]:
    """`all` means every split (or part), in the corpus's own order."""
    if split == "all":
        return tuple(allowed)
    return (choose(option, split, allowed),)


def require_file(path: Path) -> Path:
    if path.is_dir():
        raise ImportOptionError(f"{path}: a folder, not a file; give the file inside it")
    if not path.is_file():
        raise ImportOptionError(f"{path}: file not found")
    return path


def split_files(
    source: Path, files: Mapping[str, str], split: str, option: str = "split"
) -> Iterator[tuple[str, Path]]:
    """(split, file) for each split `split` names, for corpora with one file per split; a
    file is looked for only when its turn comes, as the import would reach it."""
    for name in splits_for(split, tuple(files), option):
        yield name, require_file(source / files[name])


def expect_fields(fields: list[str], count: int, location: Location, field: str) -> list[str]:
    """A line's or row's tab-separated fields, of which the format has exactly `count`."""
    if len(fields) != count:
        raise ImportFormatError(
            location, field, f"expected {count} tab-separated fields, found {len(fields)}"
        )
    return fields


def from_validation(location: Location, error: ValidationError) -> ImportFormatError:
    """The first problem pydantic found, as an error naming the field."""
    first = error.errors()[0]
    if first["type"] == "json_invalid":
        # One record is one line, so "at line 1 column N" is just "at column N".
        return ImportFormatError(
            location, "json", problem_text(first).replace("line 1 column", "column")
        )
    return ImportFormatError(location, field_path(first["loc"]) or "record", problem_text(first))


def validated(model: type[RawT], item: object, location: Location) -> RawT:
    """`item` read as `model`; a value it refuses is an error naming the item and field."""
    try:
        return model.model_validate(item)
    except ValidationError as error:
        raise from_validation(location, error) from None


def json_document(path: Path, raw: bytes, expected: type[JsonT], what: str) -> JsonT:
    """A file that is one JSON document, which must be an `expected` (`what` says of what); a
    syntax error names its line, a byte that is not UTF-8 the encoding."""
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ImportFormatError(Location(path, error.lineno), "json", error.msg) from None
    except UnicodeDecodeError as error:
        problem = f"not valid UTF-8 ({error.reason})"
        raise ImportFormatError(Location(path), "encoding", problem) from None
    if not isinstance(document, expected):
        raise ImportFormatError(Location(path), "json", f"expected {what}")
    return document


def json_dialogues(path: Path, raw: bytes, model: type[RawT]) -> Iterator[tuple[Location, RawT]]:
    """Each dialogue of a file that is one JSON array of them (`raw`, its bytes), as `model`."""
    for number, item in enumerate(json_document(path, raw, list, "an array of dialogues")):
        location = Location(path, item=f"dialogue {number}")
        yield location, validated(model, item, location)


def decoded_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line, decoding per line so a bad byte is pinned to its line."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ImportFormatError(
                    Location(path, number), "encoding", f"not valid UTF-8 ({error.reason})"
                ) from None


def text_lines(path: Path) -> Iterator[tuple[Location, str]]:
    """Each non-blank line with where it stands (for formats of one record a line)."""
    for number, text in decoded_lines(path):
        if text.strip():
            yield Location(path, number), text


def iter_jsonl(path: Path, model: type[RawT]) -> Iterator[tuple[Location, RawT]]:
    """Each non-blank line of a JSON Lines file, parsed into `model`."""
    for location, text in text_lines(path):
        try:
            yield location, model.model_validate_json(text.rstrip("\r\n"))
        except ValidationError as error:
            raise from_validation(location, error) from None


def label(taxonomy: Taxonomy, kind: LabelKind, raw: str, location: Location, field: str) -> str:
    """The taxonomy's name for a corpus label; a label it does not know is a format error."""
    name = normalise_label(raw, taxonomy, kind)
    if name is None:
        raise ImportFormatError(
            location, field, f"label {raw!r} is not in taxonomy {taxonomy.id!r} ({kind})"
        )
    return name


def unique(items: Sequence[str]) -> tuple[str, ...]:
    """Items once each, in first-seen order (a merged reply carries the union of labels)."""
    return tuple(dict.fromkeys(items))


def conversation(location: Location, **fields: Any) -> Conversation:
    """Build and check a conversation; a value the format refuses names where it came from."""
    return validated(Conversation, fields, location)


def number(raw: object, location: Location, field: str) -> float:
    try:
        return float(str(raw).strip())
    except ValueError:
        raise ImportFormatError(location, field, f"{raw!r} is not a number") from None


def text(raw: str | None, location: Location, field: str) -> str:
    """An utterance's text, trimmed; an empty one is a format error (texts are required)."""
    stripped = (raw or "").strip()
    if not stripped:
        raise ImportFormatError(location, field, "empty text")
    return stripped
