"""The frame's columns hold what each record says: its `scores` by key (NaN where the record
lacks the key or holds None), whatever mix of keys the records have."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from attunebench.analysis.cells import build_cell
from attunebench.analysis.frame import Frame, present
from attunebench.analysis.loading import Runs
from attunebench.analysis.rows import item_golds, task_info
from attunebench.analysis.scores import column_values
from attunebench.records import JUDGE_FAILED
from attunebench.tasks.helpers.metrics import Column
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


def test_judged_column_and_cell_judges_read_each_records_verdicts() -> None:
    """`judged` marks the records that hold a verdict, and a cell names per model the judges
    of its own records: a judge that judged one model's reply is not another's."""
    runs = synthetic.runs(
        Plan({"m/a": {"response": 0.6}, "m/b": {"response": 0.6}}, 6, judge_accuracy=0.7)
    )
    records = list(runs.records)
    first = next(i for i, r in enumerate(records) if r.model == "m/b" and r.verdicts)
    other = records[first].verdicts[0].model_copy(update={"judge": "judge/other"})
    records[first] = records[first].model_copy(update={"verdicts": (other,)})
    last = next(i for i, r in enumerate(records) if r.model == "m/a" and r.verdicts)
    records[last] = records[last].model_copy(update={"verdicts": ()})
    frame = Frame.from_records(records)
    assert frame.judged.tolist() == [bool(r.verdicts) for r in records]
    assert not frame.judged.all() and frame.judged.any()
    cell = build_cell(frame, "response", records[first].variant, all_items=True)
    judges: dict[str, set[str]] = {"m/a": set(), "m/b": set()}
    for record in records:
        if record.task == "response":
            judges[record.model] |= {v.judge for v in record.verdicts}
    assert cell.judges == {model: sorted(found) for model, found in judges.items()}
    assert "judge/other" in cell.judges["m/b"] and "judge/other" not in cell.judges["m/a"]


def test_verdict_columns_give_back_each_records_judges_and_pairwise_verdicts() -> None:
    """Each verdict's record and judge, in the records' order, and `pairwise` exactly where a
    record holds a pairwise verdict among others (not where it holds ratings alone)."""
    runs = synthetic.runs(
        Plan({"m/a": {"response": 0.6}, "m/b": {"response": 0.6}}, 6, judge_accuracy=0.7)
    )
    records = list(runs.records)
    judged = [i for i, r in enumerate(records) if r.verdicts]
    some, none, mixed = judged[0], judged[1], judged[2]
    first = records[mixed].verdicts[0]
    pairwise = first.model_copy(update={"mode": "pairwise", "judge": "judge/pairs"})
    records[mixed] = records[mixed].model_copy(update={"verdicts": (first, pairwise)})
    records[none] = records[none].model_copy(update={"verdicts": ()})
    records[some] = records[some].model_copy(update={"verdicts": (pairwise,)})
    frame = Frame.from_records(records)
    expected = [(i, v.judge) for i, r in enumerate(records) for v in r.verdicts]
    judges = [frame.judges[j] for j in frame.verdict_judge]
    found = list(zip(frame.verdict_record.tolist(), judges, strict=True))
    assert found == expected
    assert list(frame.judges) == sorted({judge for _, judge in expected})
    held = [any(v.mode == "pairwise" for v in r.verdicts) for r in records]
    assert frame.pairwise.tolist() == held
    assert [i for i, h in enumerate(held) if h] == [some, mixed]


def test_no_verdict_gives_empty_verdict_columns() -> None:
    runs = synthetic.runs(Plan({"m/a": {"emotion": 0.6}}, conversations=6))
    frame = Frame.from_records(runs.records)
    assert frame.judges == () and len(frame.verdict_record) == len(frame.verdict_judge) == 0
    assert not frame.pairwise.any() and len(frame.pairwise) == len(runs.records)
    cell = build_cell(frame, "emotion", frame.variants[0], all_items=True)
    assert cell.judges == {}


def test_present_codes_are_np_uniques() -> None:
    """The distinct codes, sorted, as `np.unique` gives them: with gaps, the largest code
    held, repeats out of order, and none at all."""
    rng = np.random.default_rng(3)
    for size in (1, 2, 7, 40):
        codes = rng.choice(np.arange(0, size, 2), size=25).astype(np.int64)
        assert present(codes, size) == np.unique(codes).tolist()
    assert present(np.array([6, 0, 6], dtype=np.int64), 7) == [0, 6]
    assert present(np.zeros(0, dtype=np.int64), 3) == []


def test_task_variants_and_models_are_those_of_the_task_alone() -> None:
    """A task's variants and scored models are its own records', not another task's (the
    trap: a variant and a model only the other task has)."""
    plan = Plan({"m/a": {"emotion": 0.6, "behavior": 0.5}, "m/b": {"behavior": 0.5}}, 6)
    records = list(synthetic.runs(plan).records)
    records = [
        r.model_copy(update={"variant": "informed"}) if r.task == "behavior" else r for r in records
    ]
    frame = Frame.from_records(records)
    for task in ("emotion", "behavior"):
        own = [r for r in records if r.task == task]
        assert frame.task_variants(task) == sorted({r.variant for r in own})
        for variant in frame.task_variants(task):
            scored = {
                r.model
                for r in own
                if r.variant == variant and r.status != "failed" and r.score is not None
            }
            assert frame.task_models(task, variant) == sorted(scored)
    assert frame.task_variants("emotion") != frame.task_variants("behavior")
    assert frame.task_models("emotion", frame.task_variants("emotion")[0]) == ["m/a"]


def test_flag_codes_give_back_each_records_flags_and_judge_failures() -> None:
    """Each record's flags by its code (one a list, as a record constructed unvalidated holds:
    the trap), `judge_failed` where they hold the judge failure, and a flag column read from
    the codes as from the records (none for a failed record)."""
    runs = synthetic.runs(Plan({"m/a": {"response": 0.6}}, 6, judge_accuracy=0.7))
    kinds: list[object] = [(), (JUDGE_FAILED,), ("one-order-only",), ["one-order-only", "x"]]
    records = [
        r.model_copy(update={"flags": kinds[i % len(kinds)]}) for i, r in enumerate(runs.records)
    ]
    records[4] = records[4].model_copy(update={"status": "failed", "score": None})
    frame = Frame.from_records(records)
    assert len(frame.flag_sets) == len(kinds)
    for i, record in enumerate(records):
        assert frame.flag_sets[frame.flag[i]] == tuple(record.flags)
        assert frame.judge_failed[i] == (JUDGE_FAILED in record.flags)
    rows = np.arange(len(records))
    found = column_values(frame, rows, Column(flag="one-order-only"))[:, 0]
    for i, record in enumerate(records):
        expected = (
            math.nan if record.status == "failed" else float("one-order-only" in record.flags)
        )
        assert found[i] == expected or (math.isnan(found[i]) and math.isnan(expected))
    assert np.nansum(found) > 0 and np.isnan(found[4])


def test_unvalidated_flags_of_none_or_one_bare_flag_read_as_no_flags_and_one_flag() -> None:
    """A record constructed unvalidated may hold None (read as no flags: the frame still builds)
    or one bare flag (read as that flag, not as its letters: the trap)."""
    runs = synthetic.runs(Plan({"m/a": {"response": 0.6}}, 4, judge_accuracy=0.7))
    kinds: list[object] = [None, JUDGE_FAILED, "one-order-only", ()]
    records = [
        r.model_copy(update={"flags": kinds[i % len(kinds)]}) for i, r in enumerate(runs.records)
    ]
    frame = Frame.from_records(records)
    expected = [(), (JUDGE_FAILED,), ("one-order-only",), ()]
    for i in range(len(records)):
        assert frame.flag_sets[frame.flag[i]] == expected[i % len(kinds)]
        assert frame.judge_failed[i] == (i % len(kinds) == 1)
    found = column_values(frame, np.arange(len(records)), Column(flag="one-order-only"))[:, 0]
    assert [found[i] == 1.0 for i in range(4)] == [False, False, True, False]
    with_a_list = [*records[:4], records[4].model_copy(update={"flags": ["one-order-only"]})]
    frame = Frame.from_records(with_a_list)  # a list beside None and a bare flag
    assert [frame.flag_sets[code] for code in frame.flag] == [*expected, ("one-order-only",)]


def test_item_golds_read_each_items_level_and_derived_flag_with_the_types_defaults() -> None:
    """Per item (its last record), its conversation, gold level and derived flag, a field the
    gold lacks (or no gold at all) taking the gold type's default; the task's description
    counts them (the trap: a derived item's conversation is no source of the task's gold)."""
    runs = synthetic.runs(Plan({"m/a": {"emotion": 0.6}, "m/b": {"emotion": 0.5}}, 6))
    golds: list[dict[str, object] | None] = [
        {"level": "conversation", "derived": True},
        {"level": "turn"},
        {"derived": False},
        None,
    ]
    items = sorted({(r.conversation_id, r.turn_index) for r in runs.records})
    planted = {item: golds[n % len(golds)] for n, item in enumerate(items)}
    records = [
        r.model_copy(update={"gold": planted[r.conversation_id, r.turn_index]})
        for r in runs.records
    ]
    frame = Frame.from_records(records)
    cell = build_cell(frame, "emotion", frame.variants[0], all_items=True)
    conversations, levels, derived = item_golds(frame, cell)
    found = sorted(
        zip([frame.conversations[c] for c in conversations], levels, derived, strict=True)
    )
    expected = sorted(
        (c, str((g or {}).get("level", "turn")), bool((g or {}).get("derived", False)))
        for (c, _), g in planted.items()
    )
    assert found == expected
    info = task_info(
        frame,
        Runs(runs.runs, tuple(records), runs.conversations),
        "emotion",
        {("emotion", frame.variants[0]): cell},
    )
    held = [bool(g and g.get("derived")) for g in planted.values()]
    assert info.derived_share == sum(held) / len(held) == sum(derived) / len(derived)
    assert info.gold_levels == dict(sorted(Counter(levels).items()))
    assert "derived" in info.provenance
    # the trap: every item derived, no conversation is a source of the task's gold
    derived_only = [r.model_copy(update={"gold": {"derived": True}}) for r in runs.records]
    frame = Frame.from_records(derived_only)
    cell = build_cell(frame, "emotion", frame.variants[0], all_items=True)
    whole = Runs(runs.runs, tuple(derived_only), runs.conversations)
    info = task_info(frame, whole, "emotion", {("emotion", frame.variants[0]): cell})
    assert info.provenance == ["derived"] and info.derived_share == 1.0
