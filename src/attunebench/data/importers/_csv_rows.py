"""Reading CSV/TSV files with errors that name file, line and column."""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from pathlib import Path

from attunebench.data.importers._base import (
    ImportFormatError,
    ImportOptionError,
    Location,
    require_file,
)


def csv_records(path: Path, delimiter: str = ",") -> Iterator[tuple[Location, list[str]]]:
    """Each non-empty record with the line it ends on (quoted fields may span lines)."""
    with open(require_file(path), encoding="utf-8-sig", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter)
        try:
            for values in reader:
                if values:
                    yield Location(path, reader.line_num), values
        except UnicodeDecodeError as error:
            raise ImportFormatError(
                Location(path, reader.line_num + 1), "encoding", f"not valid UTF-8 ({error.reason})"
            ) from None
        except csv.Error as error:
            raise ImportFormatError(Location(path, reader.line_num), "row", str(error)) from None


def csv_rows(
    path: Path, required: Sequence[str], delimiter: str = ","
) -> Iterator[tuple[Location, dict[str, str]]]:
    """Each data row as {column: value}, after checking the header has every required column.

    A row shorter than the header is an error naming its line and the first missing column;
    a longer one is an error too, since its values could not be matched to columns.
    """
    records = csv_records(path, delimiter)
    first = next(records, None)
    if first is None:
        raise ImportOptionError(f"{path}: empty file (no header row)")
    header = first[1]
    missing = [column for column in required if column not in header]
    if missing:
        raise ImportOptionError(
            f"{path}:1: no column {', '.join(map(repr, missing))} (columns: {', '.join(header)})"
        )
    for location, values in records:
        if len(values) < len(header):
            raise ImportFormatError(location, header[len(values)], "missing (row too short)")
        if len(values) > len(header):
            raise ImportFormatError(
                location, "row", f"{len(values)} fields but the header has {len(header)}"
            )
        yield location, dict(zip(header, values, strict=True))
