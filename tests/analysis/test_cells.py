"""Common items: a model whose API refuses the hardest items is scored on the same items as the
others, and the items left out are listed with why; `all_items` keeps them and warns."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from typing import Any

import pytest

from attunebench.analysis.cells import build_cell, typed_views
from attunebench.analysis.frame import Frame
from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import ScoreRow, Summary
from attunebench.analysis.summary import Options, build_summary
from attunebench.records import ItemRecord
from planted import synthetic
from planted.synthetic import Plan

REFUSAL = "HTTP 400: the request was refused by the content policy"
OPTIONS = Options(resamples=200, permutations=99)
KINDS = {"baseline/random": "baseline"}


def refusing_runs() -> tuple[Runs, set[tuple[str, int]]]:
    """m/refuser answers exactly as m/a does, except that its API refuses (permanently) every
    emotion item that both other models got wrong."""
    accuracy = {name: {"emotion": 0.55} for name in ("m/a", "m/b")}
    runs = synthetic.runs(
        Plan(accuracy, conversations=40, items_per_conversation=4, conversation_spread=1.0)
    )
    scores: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in runs.records:
        scores[r.conversation_id, r.turn_index].append(r.score or 0.0)
    hardest = {key for key, found in scores.items() if max(found) == 0.0}

    def refused(record: ItemRecord) -> ItemRecord:
        update: dict[str, object] = {"model": "m/refuser"}
        if (record.conversation_id, record.turn_index) in hardest:
            update.update(
                status="failed",
                prediction=None,
                score=None,
                scores={},
                error=REFUSAL,
                permanent=True,
            )
        return record.model_copy(update=update)

    copies = tuple(refused(r) for r in runs.records if r.model == "m/a")
    return Runs(runs.runs, runs.records + copies, runs.conversations), hardest


def headline(summary: Summary) -> dict[str, ScoreRow]:
    """Each model's mean per-item emotion score (the headline is macro-F1)."""
    return {r.model: r for r in summary.scores if r.metric == "score" and r.task == "emotion"}


def test_every_model_is_scored_on_the_items_every_model_answered() -> None:
    runs, hardest = refusing_runs()
    assert 3 <= len(hardest) < 80
    summary = build_summary(runs, OPTIONS)
    rows = headline(summary)
    assert {row.n for row in rows.values()} == {160 - len(hardest)}
    assert rows["m/refuser"].value == rows["m/a"].value  # the same answers on the same items
    assert rows["m/refuser"].n_failed == len(hardest)
    listed = summary.left_out_items
    assert {(i.conversation_id, i.turn_index) for i in listed} <= hardest
    assert len(listed) == min(len(hardest), 20)  # listed up to 20 per cell, all counted
    assert all(i.missing_for == ["m/refuser"] and REFUSAL in i.reason for i in listed)
    (info,) = summary.tasks
    assert info.left_out_items == len(hardest)
    assert any(w.kind == "common_items" for w in summary.warnings)


def test_all_items_keeps_them_and_warns() -> None:
    runs, hardest = refusing_runs()
    summary = build_summary(runs, Options(resamples=200, permutations=99, all_items=True))
    rows = headline(summary)
    assert rows["m/a"].n == 160 and rows["m/refuser"].n == 160 - len(hardest)
    refuser, honest = rows["m/refuser"].value, rows["m/a"].value
    assert refuser is not None and honest is not None
    # scored on the easy items only, the refusing model looks better than its twin
    assert refuser == pytest.approx(honest * 160 / (160 - len(hardest)))
    assert refuser > honest
    assert summary.left_out_items == []
    assert any(w.kind == "uneven_items" for w in summary.warnings)
    assert summary.settings.all_items


def test_a_yardsticks_failures_take_no_items_from_the_models_under_test() -> None:
    # Three models under test answer every item; the random baseline's API fails on a third of
    # the emotion items, and m/b's on four. The common items are those every model under test
    # answered (all but m/b's four), not fewer because of the baseline; the baseline is scored
    # on the common items it has, and a warning says how many it lacks.
    accuracy = {name: {"emotion": 0.6} for name in ("m/a", "m/b", "m/c")}
    accuracy["baseline/random"] = {"emotion": 0.3}
    runs = synthetic.runs(Plan(accuracy, conversations=40, items_per_conversation=4, kinds=KINDS))
    items = sorted({(r.conversation_id, r.turn_index) for r in runs.records})
    refusals = {"baseline/random": set(items[::3]), "m/b": set(items[1:17:4])}

    def refused(record: ItemRecord) -> ItemRecord:
        if (record.conversation_id, record.turn_index) not in refusals.get(record.model, ()):
            return record
        update = {"status": "failed", "prediction": None, "score": None, "scores": {}}
        return record.model_copy(update={**update, "error": REFUSAL, "permanent": True})

    failing = Runs(runs.runs, tuple(refused(r) for r in runs.records), runs.conversations)
    alone = Runs(
        runs.runs,
        tuple(r for r in failing.records if r.model != "baseline/random"),
        runs.conversations,
    )
    summary, without = build_summary(failing, OPTIONS), build_summary(alone, OPTIONS)
    rows, reference = headline(summary), headline(without)
    common = 160 - len(refusals["m/b"])
    assert {rows[m].n for m in ("m/a", "m/b", "m/c")} == {common}  # not fewer
    for model in ("m/a", "m/b", "m/c"):  # the same numbers as with no baseline at all
        assert (rows[model].value, rows[model].ci_low) == (
            reference[model].value,
            reference[model].ci_low,
        )
    assert summary.rank_correlation == without.rank_correlation
    lacks = len(refusals["baseline/random"] - refusals["m/b"])
    assert rows["baseline/random"].n == common - lacks
    assert all(i.missing_for == ["m/b"] for i in summary.left_out_items)
    (notice,) = [w for w in summary.warnings if w.kind == "yardstick_items"]
    assert notice.model == "baseline/random"
    assert f"no answer for {lacks} of the {common} items" in notice.message


def dumped(value: Any) -> Any:
    """A gold or prediction as JSON (a validated one holds tuples where one built as read
    holds lists)."""
    return json.dumps(None if value is None else dict(value), sort_keys=True, default=vars)


def test_typed_views_read_every_record_as_the_task_reads_it() -> None:
    """Each record's view holds the gold and prediction `Scoring.view` reads from it, equal
    predictions shared: also where one model's record of an item holds a gold that differs
    from the others' (a merged older run), and where a prediction does not validate. Its status
    (read from the frame's columns) is the record's: an invalid answer is not parsed."""
    plan = Plan({name: {"emotion": 0.6} for name in ("m/a", "m/b")}, conversations=12)
    runs = synthetic.runs(plan)
    first = runs.records[0]
    changed = first.model_copy(update={"gold": {**(first.gold or {}), "primary": "other"}})
    odd = runs.records[1].model_copy(update={"prediction": {"primary": 3, "extra": [1.5]}})
    invalid = [r.model_copy(update={"status": "invalid"}) for r in runs.records[2:5]]
    records = (changed, odd, *invalid, *runs.records[5:])
    frame = Frame.from_records(records)
    cell = build_cell(frame, "emotion", first.variant, all_items=True)
    assert cell.declaration is not None
    views = typed_views(cell.declaration, frame, cell.mask)
    assert len(views) == int(cell.mask.sum()) > 40
    for i, view in views.items():
        plain = cell.declaration.scoring.view(frame.records[i])
        assert view.record is frame.records[i]
        assert dumped(view.gold) == dumped(plain.gold)
        assert dumped(view.prediction) == dumped(plain.prediction)
        assert (view.status, view.parsed) == (plain.status, plain.parsed)
    assert [views[i].parsed for i in (2, 3, 4)] == [False] * 3 and views[5].parsed
    same_item = [i for i in views if i and frame.item[i] == frame.item[0]]
    assert same_item and views[0].gold.primary == "other"
    assert all(views[i].gold.primary == first.gold["primary"] != "other" for i in same_item)
    distinct = {json.dumps(v.record.prediction, sort_keys=True) for v in views.values()}
    assert len({id(v.prediction) for v in views.values()}) == len(distinct)


def test_each_models_rows_are_its_records_in_the_cell_in_order() -> None:
    """A cell's rows per model, found in one pass, are the model's records among the cell's
    (a model with none in the cell has none); the frame's order is kept."""
    plan = Plan({"m/a": {"emotion": 0.6}, "m/b": {"emotion": 0.4, "behavior": 0.5}}, 8)
    records = list(synthetic.runs(plan).records)
    frame = Frame.from_records(records)
    for task in ("emotion", "behavior"):
        cell = build_cell(frame, task, frame.task_variants(task)[0], all_items=False)
        for model in range(len(frame.models)):
            expected = [
                i for i, r in enumerate(records) if cell.mask[i] and r.model == frame.models[model]
            ]
            found = cell.rows(frame, model)
            assert found.tolist() == expected
            assert not found.flags.writeable  # shared by every step that asks
    behavior = build_cell(frame, "behavior", frame.task_variants("behavior")[0], all_items=False)
    assert behavior.rows(frame, frame.models.index("m/a")).size == 0


def cell_by_sets(
    frame: Frame, task: str, variant: str, all_items: bool, subjects: list[int]
) -> dict[str, Any]:
    """What a cell keeps, found with a set of items per model: the definition (module
    docstring) read literally, for the cell's one-pass reading to be checked against."""
    models = sorted(
        {
            int(m)
            for m, t, v in zip(frame.model, frame.task, frame.variant, strict=True)
            if frame.tasks[t] == task and frame.variants[v] == variant
        }
    )
    answered = frame.cell(task, variant) & frame.answered
    by_model = {m: {int(i) for i in frame.item[answered & (frame.model == m)]} for m in models}
    compared = [m for m in models if m in subjects] or models
    answering = [by_model[m] for m in compared if by_model[m]]
    common = set.intersection(*answering) if answering else set()
    missing = sorted(set().union(*answering) - common)
    everyone = [items for items in by_model.values() if items]
    kept = [
        bool(answered[i]) and (all_items or int(frame.item[i]) in common)
        for i in range(len(frame.records))
    ]
    shown = [
        sorted(frame.models[m] for m in compared if code not in by_model[m])
        for code in missing[:20]
    ]
    lacking = {
        frame.models[m]: len(common - by_model[m])
        for m in models
        if m not in compared and common - by_model[m]
    }
    return {
        "mask": kept,
        "left_out_count": len(missing),
        "missing_for": [] if all_items else shown,
        "lacking": {} if all_items else lacking,
        "common": len(common),
        "differ": all_items
        and len(everyone) > 1
        and set().union(*everyone) != set.intersection(*everyone),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cell_keeps_what_a_set_of_items_per_model_would(seed: int) -> None:
    """Planted failures (each model's own, a yardstick's many, one model's every item) and
    models under test or not: the cell's common items, left-out items (and whom they are
    missing for), yardsticks' lacking items and uneven items are those the sets give."""
    accuracy = {name: {"emotion": 0.6, "behavior": 0.5} for name in ("m/a", "m/b", "m/c")}
    accuracy["baseline/random"] = {"emotion": 0.3, "behavior": 0.3}
    plan = Plan(accuracy, conversations=12, items_per_conversation=4, kinds=KINDS, seed=seed)
    runs = synthetic.runs(plan)
    rng = random.Random(seed)
    failing = {"m/a": 0.1, "m/b": 0.05, "baseline/random": 0.4, "m/c": 1.0 if seed == 2 else 0.0}

    def refused(record: ItemRecord) -> ItemRecord:
        if record.task != "emotion" or rng.random() >= failing[record.model]:
            return record
        update = {"status": "failed", "prediction": None, "score": None, "scores": {}}
        return record.model_copy(update={**update, "error": REFUSAL})

    frame = Frame.from_records(tuple(refused(r) for r in runs.records))
    under_test = [frame.models.index(m) for m in ("m/a", "m/b", "m/c")]
    for subjects in (under_test, [], under_test[:1]):
        for all_items in (False, True):
            for task in ("emotion", "behavior"):
                cell = build_cell(frame, task, "blind", all_items, subjects)
                expected = cell_by_sets(frame, task, "blind", all_items, subjects)
                assert cell.mask.tolist() == expected["mask"]
                assert cell.left_out_count == expected["left_out_count"]
                assert [i.missing_for for i in cell.left_out] == expected["missing_for"]
                assert (cell.lacking, cell.common) == (expected["lacking"], expected["common"])
                assert cell.items_differ == expected["differ"]
    emotion = build_cell(frame, "emotion", "blind", False, under_test)
    assert emotion.left_out_count > 0 and emotion.lacking  # the planted failures tell
