"""A CSV's conversation-level outcome columns: the person's rating of the whole conversation
(`rating=COL`) and their other answers after it (`NAME=COL`), each on its own scale: the one
`--outcome-scale` gives, else the range its numbers span in the file (reported), or a word
map's (`--outcome-map`). Rows of one conversation giving different values are refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attunebench.data.importers._base import ImportFormatError, ImportOptionError, Location
from attunebench.data.importers._csv_groups import Record
from attunebench.data.importers._label_sets import json_file

RATING = "rating"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
Scale = tuple[float, float]


def _spec(option: str, spec: str) -> tuple[str, str]:
    """`NAME=VALUE` split, the name checked: a key the outcome's JSON and the prompt can carry."""
    name, equals, value = spec.partition("=")
    name, value = name.strip(), value.strip()
    if not equals or not value:
        raise ImportOptionError(f"{option} {spec!r}: give FIELD=VALUE, e.g. {option} rating=score")
    if not _NAME.fullmatch(name):
        raise ImportOptionError(
            f"{option} {spec!r}: the field {name!r} must be a name of letters, digits and _"
        )
    return name, value


def parse_scale(option: str, spec: str) -> tuple[str, Scale]:
    """`NAME=LOW:HIGH` (bounds may be negative: `mood=-3:3`)."""
    name, bounds = _spec(option, spec)
    low_text, colon, high_text = bounds.partition(":")
    low, high = _as_number(low_text.strip()), _as_number(high_text.strip())
    if not colon or low is None or high is None:
        raise ImportOptionError(f"{option} {spec!r}: give the scale as LOW:HIGH, e.g. {name}=1:5")
    if low >= high:
        raise ImportOptionError(f"{option} {spec!r}: {low:g} is not below {high:g}")
    return name, (low, high)


@dataclass(frozen=True)
class OutcomeMap:
    """An outcome field's words and the numbers they stand for, from `--outcome-map`."""

    path: Path
    numbers: dict[str, float]  # by the word's folded form
    words: tuple[str, ...]  # as the map writes them

    @classmethod
    def load(cls, path: Path) -> OutcomeMap:
        read = json_file(path, "outcome map")
        pairs = read.items() if isinstance(read, dict) else ()
        numbers = {_folded(word): float(value) for word, value in pairs if _is_number(value)}
        if not numbers or len(numbers) != len(pairs):
            raise ImportOptionError(
                f"{path}: an outcome map is one JSON object of words and the numbers they "
                'stand for, e.g. {"Not at all": 1, "Very much": 5}'
            )
        return cls(path, numbers, tuple(word for word, _ in pairs))

    def scale(self) -> Scale | None:
        low, high = min(self.numbers.values()), max(self.numbers.values())
        return (low, high) if low < high else None

    def number(self, raw: str, location: Location, column: str) -> float:
        found = self.numbers.get(_folded(raw))
        if found is None:
            words = ", ".join(repr(word) for word in self.words[:8])
            raise ImportFormatError(
                location, column, f"{raw!r} is not in the outcome map {self.path} ({words})"
            )
        return found


def _folded(word: str) -> str:
    return " ".join(word.split()).casefold()


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class OutcomeColumns:
    """Each outcome field's column, declared scale, and map of words to numbers."""

    columns: dict[str, str]
    scales: dict[str, Scale]
    maps: dict[str, OutcomeMap] = field(default_factory=dict)

    @classmethod
    def parse(
        cls, columns: Sequence[str], scales: Sequence[str], maps: Sequence[str] = ()
    ) -> OutcomeColumns:
        found: dict[str, str] = {}
        for spec in columns:
            name, column = _spec("--outcome-col", spec)
            if name in found:
                raise ImportOptionError(f"--outcome-col {name} is given twice")
            found[name] = column
        mapped: dict[str, OutcomeMap] = {}
        for spec in maps:
            name, file = _spec("--outcome-map", spec)
            _given(found, "--outcome-map", spec, name)
            mapped[name] = OutcomeMap.load(Path(file))
        declared = {name: scale for name, m in mapped.items() if (scale := m.scale())}
        for spec in scales:
            name, scale = parse_scale("--outcome-scale", spec)
            _given(found, "--outcome-scale", spec, name)
            declared[name] = scale
        return cls(found, declared, mapped)

    def number(self, name: str, raw: str, location: Location) -> float | None:
        """A value as a number: through the field's map if it has one, else as written."""
        found = self.maps.get(name)
        return _as_number(raw) if found is None else found.number(raw, location, self.columns[name])

    def unscaled(self) -> list[str]:
        """The fields whose scale is to be taken from the data."""
        return [name for name in self.columns if name not in self.scales]

    def values(self, records: Iterable[Record]) -> dict[str, tuple[Location, str]]:
        """Each field's one value in a conversation's rows, with the row it was read from."""
        found: dict[str, tuple[Location, str]] = {}
        for location, row in records:
            for name, column in self.columns.items():
                value = row[column].strip()
                if not value:
                    continue
                first = found.setdefault(name, (location, value))
                if first[1] != value and _as_number(first[1]) != _as_number(value):
                    raise ImportFormatError(
                        location,
                        column,
                        f"{value!r} differs from {first[1]!r} on line {first[0].line}; "
                        "an outcome column holds one value per conversation",
                    )
        return found

    def outcome(self, records: Iterable[Record]) -> dict[str, Any] | None:
        """A conversation's `outcome` from its rows, each number checked against its scale
        (declared or observed); None when no row gives one."""
        outcome: dict[str, Any] = {"survey": {}, "scales": {}}
        for name, (location, raw) in self.values(records).items():
            column, scale = self.columns[name], self.scales.get(name)
            number = self.number(name, raw, location)
            if number is None and (name == RATING or scale is not None):
                raise ImportFormatError(location, column, f"{raw!r} is not a number")
            if number is not None and scale is not None:
                if not scale[0] <= number <= scale[1]:
                    raise ImportFormatError(
                        location,
                        column,
                        f"{number:g} is outside the scale {scale[0]:g}:{scale[1]:g}",
                    )
                outcome["scales"][name] = {"low": scale[0], "high": scale[1]}
            answer: str | float = raw if number is None else number
            if name == RATING:
                outcome[RATING] = answer
            else:
                outcome["survey"][name] = answer
        return outcome if (RATING in outcome or outcome["survey"]) else None


def _given(found: Mapping[str, str], option: str, spec: str, name: str) -> None:
    if name not in found:
        raise ImportOptionError(f"{option} {spec!r}: no --outcome-col {name}=COLUMN gives {name}")


def _as_number(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


@dataclass
class Observed:
    """The range of the numbers a column holds over a whole file."""

    column: str
    low: float = math.inf
    high: float = -math.inf
    first: Location | None = None
    lines: dict[float, int] = field(default_factory=dict)  # each value's first line

    def add(self, raw: str, location: Location) -> None:
        number = _as_number(raw.strip())
        if number is None:
            return
        self.first = self.first or location
        self.lines.setdefault(number, location.line or 0)
        self.low, self.high = min(self.low, number), max(self.high, number)

    def scale(self, option: str, thumbs: bool = False) -> Scale | None:
        """The observed range as a scale (None: no numbers); one value throughout is no range,
        and in a column that may hold thumbs (a reply rating's), whole numbers from 0 past 1
        are two scales as likely as one (`_two_scales`)."""
        if self.first is None:
            return None
        if self.low == self.high:
            raise ImportOptionError(
                f"{self.column}: every number is {self.low:g}, so its scale cannot be taken "
                f"from the data: give {option}"
            )
        if thumbs:
            self._two_scales(option)
        return self.low, self.high

    def _two_scales(self, option: str) -> None:
        """Refuse whole numbers from 0 to past 1 (0, 1, 4, 5): 0/1 thumbs beside ratings from
        1 read as one scale from 0 would make a thumb up 1 of 5. Only the user knows whether
        it is one 0:N scale, so they say it."""
        if self.low != 0 or self.high < 2 or any(v != int(v) for v in self.lines):
            return
        thumbs = [v for v in sorted(self.lines) if v <= 1]
        rated = [v for v in sorted(self.lines) if v > 1][-2:]
        seen = ", ".join(f"{v:g} on line {self.lines[v]}" for v in (*thumbs, *rated))
        where = str(self.first.path) if self.first is not None else ""
        raise ImportOptionError(
            f"{where}: {self.column} holds whole numbers from 0 to {self.high:g} ({seen}): "
            f"0/1 thumbs beside ratings from 1, or one scale from 0? Say which with {option} "
            "(thumbs and ratings need a column each)"
        )


def scale_option(key: str) -> str:
    """The option that sets the scale of an outcome field, or (key "") of the rating column."""
    return f"--outcome-scale {key}=LOW:HIGH" if key else "--rating-low and --rating-high"


def observed_scales(
    rows: Iterable[Record], columns: Mapping[str, str]
) -> dict[str, tuple[str, Scale]]:
    """Per key of `columns` (an outcome field, or "" for the rating column), the column and the
    range its numbers span over `rows` (a column with no numbers has none: a text answer)."""
    found = {key: Observed(column) for key, column in columns.items()}
    for location, values in rows:
        for observed in found.values():
            observed.add(values[observed.column], location)
    scales = {}
    for key, observed in found.items():
        scale = observed.scale(scale_option(key), thumbs=not key)
        if scale is not None:
            scales[key] = (observed.column, scale)
    return scales
