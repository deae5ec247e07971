"""Whatever bytes a file holds, the validator reports problems; it never raises anything else.

Inputs are random bytes, random JSON values and valid sample records mutated the ways real files
go wrong (a field dropped, a type changed, an unknown key, a label broken, a line cut short).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attunebench.data.sample import sample_path
from attunebench.data.validate import FileReport, Problem, load_validated, validate_file

SAMPLE = [json.loads(line) for line in sample_path().read_text(encoding="utf-8").splitlines()]
SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every location inside a JSON value."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            found += paths(item, (*prefix, position))
    return found


def _parent(record: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        record = record[part]
    return record


@st.composite
def mutated_records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(SAMPLE)))
    for _ in range(draw(st.integers(1, 4))):
        locations = paths(record)
        if not locations:
            break
        path = draw(st.sampled_from(locations))
        parent = _parent(record, path)
        action = draw(st.sampled_from(["drop", "retype", "unknown", "label"]))
        if action == "drop":
            del parent[path[-1]]
        elif action == "retype":
            parent[path[-1]] = draw(json_values)
        elif action == "unknown" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
        elif isinstance(parent[path[-1]], str):
            parent[path[-1]] = draw(st.sampled_from(["", " ", "ennui", "snark", "z", "joy"]))
    return record


def _check(path: Path, lines: int) -> FileReport:
    report = validate_file(path, max_line_bytes=20_000)
    assert all(isinstance(p, Problem) and p.message for p in report.problems)
    assert all(p.line is None or 1 <= p.line <= lines for p in report.problems)
    if report.ok:  # valid means loadable, to the same count
        assert len(load_validated(path, max_line_bytes=20_000)) == report.conversations
    return report


@SETTINGS
@given(data=st.binary(max_size=2000))
def test_random_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(data)
    _check(path, data.count(b"\n") + 1)


@SETTINGS
@given(values=st.lists(json_values, min_size=1, max_size=4))
def test_random_json(tmp_path: Path, values: list[Any]) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")
    assert not _check(path, len(values)).ok or all(isinstance(v, dict) for v in values)


@SETTINGS
@given(records=st.lists(mutated_records(), min_size=1, max_size=3), cut=st.integers(0, 20_000))
def test_mutated_records(tmp_path: Path, records: list[dict[str, Any]], cut: int) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    if cut % 3 == 0:
        text = text[: len(text) - 1 - cut % len(text)]  # a truncated last line, sometimes empty
    path = tmp_path / "d.jsonl"
    path.write_text(text, encoding="utf-8")
    _check(path, len(records))
