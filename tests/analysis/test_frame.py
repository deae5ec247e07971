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


def test_gold_and_prediction_codes_give_back_each_records_own() -> None:
    """Each record's gold and prediction are found by its codes, also where one model's gold
    of an item differs from the others' (a merged older run); an item's equal golds share one."""
    runs = synthetic.runs(Plan({"m/a": {"emotion": 0.6}, "m/b": {"emotion": 0.6}}, 6))
    first = runs.records[0]
    changed = first.model_copy(update={"gold": {**(first.gold or {}), "primary": "other"}})
    records = (changed, *runs.records[1:])
    frame = Frame.from_records(records)
    for i, record in enumerate(records):
        assert frame.golds[frame.gold[i]] == record.gold
        assert frame.predictions[frame.prediction[i]] == record.prediction
    same_item = [i for i in range(1, len(records)) if frame.item[i] == frame.item[0]]
    assert same_item and all(frame.gold[i] != frame.gold[0] for i in same_item)
    assert len(frame.golds) == len(set(frame.item.tolist())) + 1
