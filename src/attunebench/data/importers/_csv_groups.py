"""The rows of an utterance-per-row file, gathered into conversations and utterances.

A conversation is a contiguous run of rows sharing its key columns' values, so a large file
streams. Rows sharing an order value are usually several annotators' rows of one utterance:
they are merged (`majority`, `union` or `first`), kept with a warning, or refused, since kept
they would repeat the utterance once per annotator.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from typing import Literal, cast

from attunebench.data.importers._base import ImportFormatError, Location, Tally, choose

Merge = Literal["majority", "union", "first"]
Ties = Literal["merge", "keep", "refuse"]
MERGES: tuple[Merge, ...] = ("majority", "union", "first")
Record = tuple[Location, dict[str, str]]


def merge_rule(value: str) -> Merge:
    return cast(Merge, choose("annotator merge", value, MERGES))


@dataclass(frozen=True)
class Row:
    """One row, read: labels as the corpus writes them (mapped later, once it is known whether
    the row is the user's)."""

    location: Location
    values: dict[str, str]
    speaker: str
    text: str
    emotions: tuple[str, ...] = ()
    behaviors: tuple[str, ...] = ()
    rating: float | None = None
    order: float | None = None
    annotator: str | None = None


def grouped(records: Iterator[Record], keys: Sequence[str]) -> Iterator[list[Record]]:
    """Contiguous runs of records sharing the key columns' values; a key seen again is an error."""
    seen: dict[tuple[str, ...], int | None] = {}
    current: list[Record] = []
    current_key: tuple[str, ...] = ()
    for location, values in records:
        key = tuple(values[column].strip() for column in keys)
        for column, value in zip(keys, key, strict=True):
            if not value:
                raise ImportFormatError(location, column, "empty conversation id")
        if current and key != current_key:
            yield current
            current = []
        if not current:
            if key in seen:
                raise ImportFormatError(
                    location,
                    "/".join(keys),
                    f"conversation {'/'.join(key)!r} continues after other conversations "
                    f"(its rows start on line {seen[key]}; keep them together)",
                )
            seen[key], current_key = location.line, key
        current.append((location, values))
    if current:
        yield current


def in_order(rows: list[Row], column: str | None, ties: Ties, tally: Tally) -> list[Row]:
    if column is None:
        return rows
    ordered = sorted(rows, key=lambda row: row.order or 0.0)
    if ties == "merge":
        return ordered
    first: dict[float | None, Row] = {}
    for row in rows:
        earlier = first.setdefault(row.order, row)
        if earlier is row:
            continue
        if ties == "refuse":
            raise ImportFormatError(
                row.location,
                column,
                f"repeats the {column} {row.order:g} of line {earlier.location.line} in its "
                "conversation (several annotators' rows of one utterance?): merge them with "
                "--annotator-col COLUMN, or keep every row with --keep-duplicate-rows",
            )
        tally[f"warning:rows repeating another row's {column} in their conversation (kept)"] += 1
    return ordered


def _utterances(rows: list[Row], by_order: bool) -> Iterator[list[Row]]:
    if by_order:
        yield from (list(run) for _, run in groupby(rows, key=lambda row: row.order))
    else:
        yield from (list(run) for _, run in groupby(rows, key=lambda row: (row.speaker, row.text)))


def _labels(rows: list[Row], kind: str, how: Merge, tally: Tally) -> tuple[str, ...]:
    given: list[tuple[str, ...]] = [getattr(row, kind) for row in rows]
    if how == "first":
        return given[0]
    votes: Counter[str] = Counter()
    spelling: dict[str, str] = {}
    for labels in given:
        keys = {label.strip().lower(): label for label in labels}
        votes.update(keys.keys())
        for key, label in keys.items():
            spelling.setdefault(key, label)
    kept = [key for key in spelling if how == "union" or 2 * votes[key] > len(rows)]
    tally["dropped:labels fewer than half an utterance's annotators gave"] += len(spelling) - len(
        kept
    )
    return tuple(spelling[key] for key in kept)


def merge_annotators(
    rows: list[Row], text_column: str, by_order: bool, how: Merge, tally: Tally
) -> list[Row]:
    """One row per utterance, its annotators' labels merged as `how` says."""
    merged = []
    for group in _utterances(rows, by_order):
        first = group[0]
        for other in group[1:]:
            if (other.speaker, other.text) != (first.speaker, first.text):
                raise ImportFormatError(
                    other.location,
                    text_column,
                    f"differs from line {first.location.line}, the same utterance "
                    "(same order value) by another annotator",
                )
        annotators = Counter(row.annotator for row in group)
        tally["warning:rows of an annotator repeating an utterance they already labelled"] += sum(
            n - 1 for n in annotators.values()
        )
        tally[f"note:annotator rows merged into one utterance each ({how})"] += len(group) - 1
        ratings = [row.rating for row in group if row.rating is not None]
        rating = first.rating if how == "first" or not ratings else sum(ratings) / len(ratings)
        merged.append(
            replace(
                first,
                emotions=_labels(group, "emotions", how, tally),
                behaviors=_labels(group, "behaviors", how, tally),
                rating=rating,
            )
        )
    return merged
