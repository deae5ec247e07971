"""The corpus parts a task's records name, read from every record's gold: a record without
gold, or whose gold names no part, counts as a part of its own (None)."""

from __future__ import annotations

from attunebench.analysis.rows import gold_parts
from planted import synthetic
from planted.synthetic import Plan


def test_gold_parts_reads_every_record() -> None:
    records = synthetic.runs(Plan({"m/a": {"emotion": 0.6}}, conversations=6)).records
    assert gold_parts(records) == {"synthetic-a", "synthetic-b"}
    unnamed = records[3].model_copy(update={"gold": {"primary": "joy"}})
    assert gold_parts([*records, unnamed]) == {"synthetic-a", "synthetic-b", None}
    bare = records[4].model_copy(update={"gold": None})
    assert gold_parts([bare, *records[5:]]) == {"synthetic-a", "synthetic-b", None}
