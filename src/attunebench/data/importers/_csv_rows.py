"""Reading CSV/TSV files with errors that name file, line and column."""

from __future__ import annotations

import ast
import csv
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path

from attunebench.data.importers._base import (
    ImportFormatError,
    ImportOptionError,
    Location,
    require_file,
)


def csv_records(path: Path, delimiter: str = ",") -> Iterator[tuple[Location, list[str]]]:
    """Each non-empty record with the line it ends on (quoted fields may span lines; a last
    record whose quote never closes, which Python's reader accepts, is refused)."""
    for _, ended, values in _spanned_records(path, delimiter):
        yield Location(path, ended), values


def _spanned_records(path: Path, delimiter: str) -> Iterator[tuple[int, int, list[str]]]:
    """Each non-empty record with the lines it starts and ends on; see `csv_records`."""
    _not_binary(require_file(path))
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        started, ended = 1, 0  # the lines the last record started and ended on
        try:
            for values in reader:
                started, ended = ended + 1, reader.line_num
                if values:
                    yield started, ended, values
        except UnicodeDecodeError:
            raise _not_utf8(path) from None
        except csv.Error as error:
            raise ImportFormatError(Location(path, reader.line_num), "row", str(error)) from None
    if ended > started:
        _check_closed(path, delimiter, started)


# What a spreadsheet or an archive starts with, and what to do with it instead.
BINARY = {
    b"PK\x03\x04": "a spreadsheet or zip archive (xlsx, ods, zip), not CSV text: save it as CSV",
    b"\xd0\xcf\x11\xe0": "an Excel (xls) file, not CSV text: save it as CSV",
    b"\x1f\x8b": "gzip-compressed: decompress it first (gunzip)",
}


def _not_binary(path: Path) -> None:
    with open(path, "rb") as handle:
        start = handle.read(4)
    for magic, what in BINARY.items():
        if start.startswith(magic):
            raise ImportOptionError(f"{path}: {what}")


def _not_utf8(path: Path) -> ImportFormatError:
    """The first byte that is not UTF-8, located by line (the text reader reads ahead)."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start]
        return ImportFormatError(
            Location(path, line),
            "encoding",
            f"byte 0x{byte:02x} is not UTF-8 (saved as Latin-1 or Windows-1252?): "
            "save the file as UTF-8",
        )
    return ImportFormatError(Location(path, 1), "encoding", "not valid UTF-8")


def _check_closed(path: Path, delimiter: str, start: int) -> None:
    """Refuse a file whose last record, from line `start`, ends inside a quoted field."""
    with open(path, encoding="utf-8-sig", newline="") as handle:
        rest = itertools.islice(handle, start - 1, None)
        try:
            for _ in csv.reader(rest, delimiter=delimiter, strict=True):
                pass
        except csv.Error as error:
            if "unexpected end of data" not in str(error):
                return  # some other irregularity, which the lenient reading accepted
            raise ImportFormatError(
                Location(path, start),
                "row",
                "a quote opened in this row is never closed, so every line after it would be "
                "one field",
            ) from None


def csv_rows(
    path: Path, required: Sequence[str], delimiter: str = ","
) -> Iterator[tuple[Location, dict[str, str]]]:
    """Each data row as {column: value}, after checking the header has every required column;
    a row of more or fewer fields than the header is an error."""
    records = _spanned_records(path, delimiter)
    first = next(records, None)
    if first is None:
        raise ImportOptionError(f"{path}: empty file (no header row)")
    header = first[2]
    _check_header(path, header, required)
    rows = 0
    for started, ended, values in records:
        rows += 1
        location = Location(path, ended)
        if len(values) != len(header):
            _misfit(path, delimiter, (started, ended), header, values)
        row = dict(zip(header, values, strict=True))
        for column in required:
            if "\x00" in row[column]:
                raise ImportFormatError(
                    location, column, "holds a NUL byte: binary data, or a file saved as UTF-16?"
                )
        yield location, row
    if rows == 0:
        raise ImportFormatError(
            Location(path, first[1]), "rows", "the header is the only row: nothing to import"
        )


def _misfit(
    path: Path, delimiter: str, lines: tuple[int, int], header: Sequence[str], values: list[str]
) -> None:
    """Refuse a row of more or fewer fields than the header; one spanning several lines is
    most often a stray quote, so the line it opens on is named."""
    started, ended = lines
    spanning = ""
    if ended > started:
        _check_closed(path, delimiter, started)
        spanning = (
            f" (a quoted field runs from line {started} to here: a stray quote on {started}?)"
        )
    location = Location(path, ended)
    if len(values) < len(header):
        raise ImportFormatError(location, header[len(values)], f"missing (row too short){spanning}")
    raise ImportFormatError(
        location, "row", f"{len(values)} fields but the header has {len(header)}{spanning}"
    )


def _check_header(path: Path, header: Sequence[str], required: Sequence[str]) -> None:
    """Every required column present, once; a JSON Lines file or another delimiter named."""
    if header and header[0].lstrip().startswith("{"):
        raise ImportOptionError(
            f"{path}:1: a JSON line, not a CSV header: a file of attunebench/v1 conversations "
            "needs no import (check it with `attunebench data validate`)"
        )
    missing = [column for column in required if column not in header]
    if missing:
        hint = ""
        if len(header) == 1 and (found := next((d for d in "\t;|" if d in header[0]), None)):
            shown = "$'\\t'" if found == "\t" else repr(found)
            hint = f"; its columns are split by {found!r}: add --delimiter {shown}"
        named = ", ".join(_short(column) for column in header[:30]).replace("\t", "\\t")
        more = f", ... ({len(header)} in all)" if len(header) > 30 else ""
        raise ImportOptionError(
            f"{path}:1: no column {', '.join(map(repr, missing))} (columns: {named}{more}){hint}"
        )
    for column in dict.fromkeys(required):
        places = [str(i) for i, name in enumerate(header, start=1) if name == column]
        if len(places) > 1:
            raise ImportOptionError(
                f"{path}:1: column {column!r} appears {len(places)} times in the header "
                f"(columns {', '.join(places)}): rename all but one"
            )


def _short(column: str, limit: int = 40) -> str:
    return column if len(column) <= limit else column[: limit - 1] + "…"


def speaker_name(cell: str) -> str:
    """A speaker cell as a name: a Python list literal of names (EmoryNLP writes
    `['Joey Tribbiani']`) gives the names it lists, joined by " and "; anything else is itself.

    >>> speaker_name("['Joey Tribbiani']"), speaker_name("['Ross Geller', 'Rachel Green']")
    ('Joey Tribbiani', 'Ross Geller and Rachel Green')
    >>> speaker_name("[laughs]")
    '[laughs]'
    """
    value = cell.strip()
    if not (value.startswith("[") and value.endswith("]")):
        return value
    try:
        names = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return value
    return " and ".join(name.strip() for name in names)
