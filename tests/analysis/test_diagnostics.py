"""Diagnostics: confusion, per-label F1, turn position, intensity, subgroups, worst items."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from attunebench.analysis.diagnostics import confusion, position_bins, worst_items
from attunebench.analysis.frame import Frame
from attunebench.analysis.loading import Runs
from attunebench.analysis.multiplicity import holm
from attunebench.analysis.summary import Options, build_summary
from attunebench.records import ItemRecord


def emotion(i: int, gold: str, predicted: str | None, status: str = "ok") -> ItemRecord:
    return ItemRecord(
        task="emotion", model="m/a", conversation_id="c1", turn_index=i, item_id="turn",
        variant="blind", status=status,  # type: ignore[arg-type]
        prediction={"primary": predicted} if predicted else None, gold={"primary": gold},
        score=float(predicted == gold),
    )  # fmt: skip


def test_confusion_counts_gold_rows_against_predicted_columns_and_invalid() -> None:
    records = [emotion(0, "joy", "joy"), emotion(1, "joy", "anger"), emotion(2, "anger", "anger"),
               emotion(3, "anger", None, status="invalid")]  # fmt: skip
    (matrix,) = confusion(Frame.from_records(records), "emotion", "blind")
    assert matrix.labels == ["anger", "joy"]
    assert matrix.predicted == ["anger", "joy", "invalid"]
    assert matrix.counts == [[1, 0, 1], [1, 1, 0]]


def test_turn_positions_are_thirds_of_the_conversation() -> None:
    records = [emotion(i, "joy", "joy") for i in range(9)]
    bins = position_bins(Frame.from_records(records), {})
    assert bins.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]


def test_holm_matches_a_hand_computed_case() -> None:
    assert holm([0.01, 0.02, 0.03, 0.5]) == pytest.approx([0.04, 0.06, 0.06, 0.5])
    assert holm([]) == []


def test_a_planted_subgroup_gap_is_found_and_small_groups_are_not_compared(
    load: Callable[..., Runs],
) -> None:
    runs = load({"m/a": {"emotion": 0.5}}, conversations=60, items_per_conversation=5,
                sources=("easy",) * 25 + ("hard",) * 30 + ("tiny",) * 5)  # fmt: skip
    easy = {c.id for c in runs.conversations.values() if c.source.name == "easy"}
    boosted = tuple(
        r.model_copy(update={"score": 1.0}) if r.conversation_id in easy else r
        for r in runs.records
    )
    summary = build_summary(Runs(runs.runs, boosted, runs.conversations), Options(resamples=300))
    rows = {(g.group, g.level): g for g in summary.diagnostics.subgroups}
    found = rows["source.name", "easy"]
    assert found.value == 1.0 and found.p_holm is not None and found.p_holm < 0.05
    tiny = rows["source.name", "tiny"]
    assert tiny.p_value is None and tiny.reason and "not compared" in tiny.reason
    assert any(w.kind == "small_subgroup" and "tiny" in w.message for w in summary.warnings)


def test_turn_position_and_intensity_views_have_intervals(load: Callable[..., Runs]) -> None:
    summary = build_summary(load({"m/a": {"emotion": 0.5}}, conversations=30,
                                 items_per_conversation=6), Options(resamples=200))  # fmt: skip
    positions = {g.level for g in summary.diagnostics.turn_position}
    assert positions == {"early", "middle", "late"}
    assert {g.level for g in summary.diagnostics.intensity} <= {
        "low (1-2)", "medium (3)", "high (4-5)"}
    assert all(g.ci_low is not None and g.ci_low <= (g.value or 0) <= (g.ci_high or 0)
               for g in summary.diagnostics.turn_position)  # fmt: skip


def test_worst_items_come_lowest_first_with_the_turn_text(load: Callable[..., Runs]) -> None:
    runs = load({"m/a": {"emotion": 0.5}, "m/b": {"emotion": 0.5}}, conversations=10)
    frame = Frame.from_records(runs.records)
    worst = worst_items(frame, "emotion", "blind", runs.conversations, limit=3)
    means = [w.mean_score for w in worst]
    assert means == sorted(means) and len(worst) == 3
    assert worst[0].text is not None and "conversation" in worst[0].text
    assert {a.model for a in worst[0].answers} == {"m/a", "m/b"}
    per_item = {}
    for r in runs.records:
        if r.task == "emotion" and r.score is not None:
            per_item.setdefault((r.conversation_id, r.turn_index), []).append(r.score)
    assert means[0] == pytest.approx(min(np.mean(v) for v in per_item.values()))
