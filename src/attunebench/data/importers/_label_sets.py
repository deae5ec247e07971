"""A corpus's own labels onto a taxonomy (shipped, from a file, or built from the corpus), through
an optional label map. The `Labeller` notes every label it does not know, with where it first
appeared, so `check()` refuses them all in one error.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from attunebench.data.importers._base import (
    ImportFormatError,
    ImportOptionError,
    LabelKind,
    Location,
    Tally,
)
from attunebench.data.schema import Taxonomy, TaxonomyLabel
from attunebench.data.schema_errors import field_path
from attunebench.data.taxonomy import load_taxonomy, normalise_label
from attunebench.frozen import problem_text

KINDS: tuple[LabelKind, ...] = ("emotions", "behaviors")
FLAGS = "--taxonomy FILE.json, --taxonomy-from-data or --label-map FILE"


def clean(raw: str) -> str:
    """A label as written, without what `normalise_label` forgives (space, brackets)."""
    return raw.strip().strip("[]").strip()


def json_file(path: Path, what: str) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ImportOptionError(f"{path}: {what} file not found") from None
    except IsADirectoryError:
        raise ImportOptionError(f"{path}: a folder, not the {what} file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ImportOptionError(f"{path}: cannot read the {what} file ({error})") from None
    except json.JSONDecodeError as error:
        raise ImportOptionError(f"{path}:{error.lineno}: not JSON ({error.msg})") from None


def taxonomy_option(value: str) -> tuple[Taxonomy, bool]:
    """(taxonomy, whether conversations must carry it inline): a shipped id or a JSON file."""
    path = Path(value)
    if not (value.endswith(".json") or path.is_file()):
        return load_taxonomy(value), False
    try:
        return Taxonomy.model_validate(json_file(path, "taxonomy")), True
    except ValidationError as error:
        raise _refused(str(path), error) from None


def _refused(where: str, error: ValidationError) -> ImportOptionError:
    """A taxonomy pydantic refused: the first problem, with where and which field."""
    first = error.errors()[0]
    return ImportOptionError(
        f"{where}: {field_path(first['loc']) or 'record'}: {problem_text(first)}"
    )


LabelMap = dict[LabelKind, dict[str, tuple[str, ...]]]


def load_label_map(path: Path, taxonomy: Taxonomy) -> LabelMap:
    """`{"emotions": {"sad": "sadness", ...}, "behaviors": {"RQ": ["reflection", "question"]}}`:
    corpus labels (any case) to the taxonomy's; an empty list leaves a label out on purpose."""
    raw = json_file(path, "label map")
    if not isinstance(raw, dict) or not set(raw) <= set(KINDS):
        raise ImportOptionError(
            f"{path}: a label map is an object with 'emotions' and/or 'behaviors'"
        )
    mapping: LabelMap = {}
    for kind, pairs in raw.items():
        if not isinstance(pairs, dict):
            raise ImportOptionError(f"{path}: {kind}: expected an object of label -> label(s)")
        mapping[kind] = {}
        for source, target in pairs.items():
            targets = [target] if isinstance(target, str) else target
            if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
                raise ImportOptionError(f"{path}: {kind}.{source}: expected a label or a list")
            names = [normalise_label(t, taxonomy, kind) for t in targets]
            missing = [t for t, name in zip(targets, names, strict=True) if name is None]
            if missing:
                raise ImportOptionError(
                    f"{path}: {kind}.{source}: {', '.join(map(repr, missing))} "
                    f"not in taxonomy {taxonomy.id!r} ({kind})"
                )
            mapping[kind][clean(source).lower()] = tuple(n for n in names if n is not None)
    return mapping


@dataclass
class Unknown:
    spelling: str
    first: Location
    rows: int = 1


class UnknownLabelsError(ImportFormatError):
    """Labels the taxonomy does not know; located at the first, listing every one."""

    def __init__(self, taxonomy: str, unknown: Mapping[tuple[str, str], Unknown]) -> None:
        (column, _), first = next(iter(unknown.items()))
        listed = "; ".join(
            f"{col} {seen.spelling!r} ({seen.rows} rows, first line {seen.first.line})"
            if seen.rows > 1
            else f"{col} {seen.spelling!r} (line {seen.first.line})"
            for (col, _), seen in unknown.items()
        )
        count = "1 label is" if len(unknown) == 1 else f"{len(unknown)} labels are"
        problem = f"{count} not in taxonomy {taxonomy!r}: {listed}. Bring them in with {FLAGS}"
        super().__init__(first.first, column, problem)
        self.unknown = dict(unknown)


@dataclass
class Labeller:
    """Corpus labels -> taxonomy names, noting the unknown (or, collecting, every label)."""

    taxonomy: Taxonomy | None
    mapping: LabelMap = field(default_factory=dict)
    unknown: dict[tuple[str, str], Unknown] = field(default_factory=dict)
    """(column, label in lower case) -> where it was first seen and how often."""
    seen: dict[LabelKind, dict[str, str]] = field(default_factory=dict)
    """Collecting: label (lower case) -> its first spelling, per kind."""
    tally: Tally = field(default_factory=Counter)

    def names(self, kind: LabelKind, raw: str, location: Location, column: str) -> tuple[str, ...]:
        label = clean(raw)
        if not label or len(label) > 100:
            raise ImportFormatError(location, column, f"{raw!r} is not a label (1-100 characters)")
        if self.taxonomy is None:
            return (self.seen.setdefault(kind, {}).setdefault(label.lower(), label),)
        mapped = self.mapping.get(kind, {}).get(label.lower())
        if mapped is not None:
            self.tally["dropped:labels the label map leaves out"] += not mapped
            return mapped
        name = normalise_label(label, self.taxonomy, kind)
        if name is None:
            seen = self.unknown.setdefault((column, label.lower()), Unknown(label, location, 0))
            seen.rows += 1
            return ()
        return (name,)

    def check(self) -> None:
        if self.unknown and self.taxonomy is not None:
            raise UnknownLabelsError(self.taxonomy.id, self.unknown)

    def taxonomy_of_data(
        self, taxonomy_id: str, name: str, columns: Mapping[LabelKind, str], path: Path
    ) -> Taxonomy:
        """The labels collected, as a taxonomy named after the source (sorted, so a re-import
        of the same corpus gives the same taxonomy)."""

        def labels(kind: LabelKind) -> tuple[TaxonomyLabel, ...]:
            return tuple(
                TaxonomyLabel(
                    name=label, description=f"{label!r} as {name} writes it ({columns[kind]})"
                )
                for label in sorted(self.seen.get(kind, {}).values(), key=str.lower)
            )

        try:
            return Taxonomy(
                id=taxonomy_id,
                version="from-data",
                description=(
                    f"The labels {name} uses, taken as they are by --taxonomy-from-data "
                    "(not mapped onto another taxonomy)."
                ),
                emotions=labels("emotions"),
                behaviors=labels("behaviors"),
            )
        except ValidationError as error:
            raise _refused(f"{path}: taxonomy from data", error) from None
