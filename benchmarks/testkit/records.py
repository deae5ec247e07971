"""Comparing two runs' records: what was scored must match; how long it took may not.

Latency depends on timing and retries, and cache hits on which session of a resumed run made a
call; everything else in a record is decided by the plan and the model's answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attunebench.engine import RECORDS_FILE, read_records
from attunebench.records import ItemRecord

VARYING = frozenset({"latency_s", "cache_hits"})
Key = tuple[str, str, str, int, str, str]


def _without_varying(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_varying(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [_without_varying(v) for v in value]
    return value


def comparable(record: ItemRecord) -> dict[str, Any]:
    """The record as JSON, without the fields that vary between equivalent runs, wherever they
    are (a task's `meta` may total its judge calls' latency too)."""
    dumped: dict[str, Any] = _without_varying(record.model_dump(mode="json"))
    return dumped


def run_records(rundir: Path) -> dict[Key, dict[str, Any]]:
    """Comparable records by item key; a key recorded twice keeps its last, as a resume does."""
    return {record.key: comparable(record) for record in read_records(rundir / RECORDS_FILE)}


def diff_records(
    expected: dict[Key, dict[str, Any]], actual: dict[Key, dict[str, Any]]
) -> list[str]:
    """What differs, one line per item: missing, unexpected, or the fields that differ."""
    lines = [f"missing {key}" for key in expected.keys() - actual.keys()]
    lines += [f"unexpected {key}" for key in actual.keys() - expected.keys()]
    for key in expected.keys() & actual.keys():
        fields = sorted(
            name
            for name in expected[key].keys() | actual[key].keys()
            if expected[key].get(name) != actual[key].get(name)
        )
        if fields:
            lines.append(f"{key}: {', '.join(fields)} differ")
    return sorted(lines)
