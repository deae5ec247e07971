"""What the CSV importer's options declare beyond rows: which column plays which part,
conversation-level columns, and who gave each kind of label."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attunebench.data.importers._base import ImportFormatError, ImportOptionError, choose
from attunebench.data.importers._csv_groups import Row
from attunebench.data.importers._label_sets import Labeller
from attunebench.data.schema import PROVENANCES

CONTEXT_FIELDS = ("topic", "situation", "emotion")


def context_targets(specs: Sequence[str]) -> list[tuple[str, str]]:
    """(target, column) for each `FIELD=COL` (a context field) or bare `COL` (`labels.COL`)."""
    targets = []
    for spec in specs:
        target, _, column = spec.rpartition("=")
        if target and target not in CONTEXT_FIELDS:
            raise ImportOptionError(
                f"context column {spec!r}: {target!r} is not one of {', '.join(CONTEXT_FIELDS)}"
            )
        targets.append((target or f"labels.{column}", column))
    return targets


def context_values(
    rows: Sequence[Row], targets: Sequence[tuple[str, str]], labeller: Labeller
) -> dict[str, Any]:
    """A conversation's context from its rows: one value per column (rows may leave it empty)."""
    context: dict[str, Any] = {"labels": {}}
    for target, column in targets:
        given = [(row, row.values[column].strip()) for row in rows if row.values[column].strip()]
        if not given:
            continue
        (first, value), *rest = given
        for row, other in rest:
            if other != value:
                raise ImportFormatError(
                    row.location,
                    column,
                    f"{other!r} differs from {value!r} on line {first.location.line}; "
                    "a conversation-level column holds one value per conversation",
                )
        if target == "emotion":
            names = labeller.names("emotions", value, first.location, column)
            if len(names) > 1:
                raise ImportFormatError(first.location, column, f"{value!r} maps to several labels")
            context["emotion"] = names[0] if names else None
        elif target.startswith("labels."):
            context["labels"][column] = value
        else:
            context[target] = value
    return context


def declared_provenance(
    specs: str | Sequence[str] | None, labelled: Mapping[str, str]
) -> dict[str, str]:
    """`WHO` for every labelled field, or `FIELD=WHO` for one; `labelled` maps each labelled
    field (`state`, `behaviors`, ...) to the column that gives it."""
    declared: dict[str, str] = {}
    for spec in (specs,) if isinstance(specs, str) else specs or ():
        labelled_field, _, who = spec.rpartition("=")
        choose("provenance", who, PROVENANCES)
        if labelled_field and labelled_field not in labelled:
            known = ", ".join(labelled) or "none: give a label column"
            raise ImportOptionError(
                f"provenance {spec!r}: no column gives {labelled_field!r} (labelled: {known})"
            )
        declared.update(dict.fromkeys([labelled_field] if labelled_field else labelled, who))
    return declared


def check_roles(keys: Sequence[str], speaker: str, text: str, label_sep: str) -> None:
    """Refuse, before the file is read, one column in two parts, and an empty label separator."""
    if not label_sep:
        raise ImportOptionError("--label-sep is empty: give the text between labels, e.g. ','")
    for option, column in (("--speaker-col", speaker), ("--text-col", text)):
        if column in keys:
            raise ImportOptionError(
                f"{option} {column!r} is also a --conversation-col: a conversation's key "
                "cannot also be its speaker or text"
            )
    if speaker == text:
        raise ImportOptionError(f"--speaker-col and --text-col are both {text!r}")


def check_rating_scale(low: float | None, high: float | None) -> None:
    """Both bounds or neither (the range of the column's numbers is then taken), low below high."""
    if (low is None) != (high is None):
        raise ImportOptionError(
            "give both --rating-low and --rating-high, or neither (the range of the rating "
            "column's numbers is then taken)"
        )
    if low is not None and high is not None and low >= high:
        raise ImportOptionError(f"--rating-low {low:g} is not below --rating-high {high:g}")
