"""The frame's columns hold what each record says: its `scores` by key (NaN where the record
lacks the key or holds None), whatever mix of keys the records have."""

from __future__ import annotations

import math

from attunebench.analysis.frame import Frame
from planted import synthetic
from planted.synthetic import Plan


def test_score_columns_read_each_record() -> None:
    runs = synthetic.runs(Plan({"m/a": {"emotion": 0.6, "behavior": 0.5}}, conversations=6))
    mixes = [{}, {"b": 1.0, "a": None}, {"a": 2.5}, {"c": 0.25, "a": 3.0, "b": -1.0}]
    records = tuple(
        record.model_copy(update={"scores": mixes[i % len(mixes)]})
        for i, record in enumerate(runs.records)
    )
    frame = Frame.from_records(records)
    assert set(frame.scores) == {"a", "b", "c"}
    for i, record in enumerate(records):
        for key, column in frame.scores.items():
            held = record.scores.get(key)
            assert math.isnan(column[i]) if held is None else column[i] == held


def test_part_column_names_each_records_corpus_part() -> None:
    runs = synthetic.runs(Plan({"m/a": {"emotion": 0.6}}, conversations=6))
    named = [None, {"part": "b"}, {"part": None}, {"part": "a"}]
    records = tuple(
        record.model_copy(update={"gold": named[i % len(named)]})
        for i, record in enumerate(runs.records)
    )
    frame = Frame.from_records(records)
    assert frame.parts == ("None", "a", "b")
    for i, record in enumerate(records):
        assert frame.parts[frame.part[i]] == str((record.gold or {}).get("part"))
