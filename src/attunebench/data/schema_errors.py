"""Pydantic validation errors as findings located by turn and field path (`turn 2,
responses[0].behaviors[1]`); of a union's branches, only the one that fits the input's JSON
type is reported, or one "expected X or Y" when none does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from attunebench.frozen import problem_text


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong with a record, located by turn position and field path."""

    message: str
    turn: int | None = None
    field: str | None = None


# Pydantic names union branches in error locations; these are the names of ours.
_BRANCH_NAMES = {
    "str": "a string",
    "constrained-str": "a string",
    "float": "a number",
    "int": "an integer",
    "bool": "a boolean",
    "Taxonomy": "an inline taxonomy object",
}


# Checked in order: a bool is also an int.
_JSON_TYPES = ((type(None), "null"), (bool, "boolean"), (int | float, "number"), (str, "string"))


def json_type(value: object) -> str:
    found = next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), None)
    return found or ("array" if isinstance(value, list) else "object")


def _short(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def field_path(parts: Sequence[str | int]) -> str | None:
    """`('responses', 0, 'behaviors', 1)` -> `responses[0].behaviors[1]`."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or None


_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def field_parts(field: str | None) -> tuple[str | int, ...]:
    """`responses[0].behaviors[1]` -> `('responses', 0, 'behaviors', 1)`, the inverse of
    `field_path` (a key holding a dot splits into more parts, which still share its prefix)."""
    if field is None:
        return ()
    return tuple(int(i) if i else name for i, name in _PART.findall(field))


def located(path: Sequence[str | int], message: str) -> Finding:
    """A finding at a record-level path, with `turns[N]` split off as the turn."""
    if len(path) >= 2 and path[0] == "turns" and isinstance(path[1], int):
        return Finding(message, path[1], field_path(path[2:]))
    return Finding(message, None, field_path(path))


@dataclass(frozen=True, slots=True)
class _Error:
    path: tuple[str | int, ...]  # where in the record, union branch names removed
    branch: tuple[int, str] | None  # (position in path, branch name) if inside a union branch
    detail: ErrorDetails


def _has(container: object, part: str | int) -> bool:
    if isinstance(container, dict):
        return part in container
    return isinstance(container, list) and isinstance(part, int) and 0 <= part < len(container)


def _split_branch(obj: object, error: ErrorDetails) -> _Error:
    """Walk the record along the error location, setting aside union branch names."""
    path: list[str | int] = []
    branch: tuple[int, str] | None = None
    current: Any = obj
    loc = error["loc"]
    for position, part in enumerate(loc):
        is_last = position == len(loc) - 1
        if _has(current, part):
            current = current[part]
        elif (
            isinstance(part, str)
            and branch is None
            and not (is_last and error["type"] == "missing")
        ):
            branch = (len(path), part)
            continue
        else:
            current = None
        path.append(part)
    return _Error(tuple(path), branch, error)


# Pydantic speaks of Python types; a person editing a JSON file thinks in JSON ones.
_JSON_NAMES = {"tuple": "an array", "list": "an array", "dictionary": "an object"}
_JSON_WORDS = re.compile(r"a valid (tuple|list|dictionary)(?: or instance of \w+)?")


def _message(error: ErrorDetails) -> str:
    kind, value = error["type"], error.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "string_too_short" and value == "":
        return "empty text"
    msg = _JSON_WORDS.sub(lambda m: _JSON_NAMES[m.group(1)], problem_text(error))
    msg = msg[:1].lower() + msg[1:]
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return f"{msg}, got {json_type(value)} {_short(value)}"
    return f"{msg} (got {_short(value)})"


def schema_findings(obj: object, exc: ValidationError) -> list[Finding]:
    """Pydantic errors as findings; of a union's failing branches, report the one that fits."""
    errors = [_split_branch(obj, e) for e in exc.errors(include_url=False)]
    plain = [e for e in errors if e.branch is None]
    unions: dict[tuple[str | int, ...], list[_Error]] = {}
    for e in errors:
        if e.branch is not None:
            unions.setdefault(e.path[: e.branch[0]], []).append(e)
    findings = [located(e.path, _message(e.detail)) for e in plain]
    for where, branch_errors in unions.items():
        # A branch whose errors lie deeper than the union matched the input's type: report it.
        deeper = [e for e in branch_errors if len(e.path) > len(where)]
        if deeper:
            fitting = deeper[0].branch
            findings += [located(e.path, _message(e.detail)) for e in deeper if e.branch == fitting]
            continue
        names = sorted(
            {_BRANCH_NAMES.get(e.branch[1], e.branch[1]) for e in branch_errors if e.branch}
        )
        value = branch_errors[0].detail.get("input")
        findings.append(
            located(where, f"expected {' or '.join(names)}, got {json_type(value)} {_short(value)}")
        )
    return findings
