"""Scores per (task, variant, metric, model): each the task's declared metric on the cell's
records, its bootstrap distribution the same metric on the resampled conversations."""

from __future__ import annotations

import numpy as np
import pytest

from attunebench.analysis.bootstrap import ClusterBootstrap
from attunebench.analysis.cells import build_cell
from attunebench.analysis.frame import Frame, _first_seen
from attunebench.analysis.scores import HEADLINE, counts, metric_scores
from attunebench.tasks.helpers.metrics import Column, distinct_pairs
from planted import synthetic
from planted.synthetic import Plan

TASKS = ("emotion", "behavior", "preference", "response")

ACCURACY = {"emotion": 0.6, "behavior": 0.5, "preference": 0.55, "response": 0.4}


@pytest.fixture(scope="module")
def frame() -> Frame:
    accuracy = {"m/a": ACCURACY, "m/b": {t: p * 0.7 for t, p in ACCURACY.items()}}
    plan = Plan(
        accuracy,
        conversations=30,
        items_per_conversation=4,
        invalid_rate=0.1,
        failed_rate=0.05,
        conversation_spread=0.4,
    )
    return Frame.from_records(synthetic.runs(plan).records)


def bootstrap_of(frame: Frame, resamples: int, seed: int = 0) -> ClusterBootstrap:
    rng = np.random.default_rng(seed)
    return ClusterBootstrap.create(np.arange(len(frame.conversations)), resamples, rng)


@pytest.mark.parametrize("task", TASKS)
def test_every_metric_is_the_declared_one_on_the_common_items(frame: Frame, task: str) -> None:
    cell = build_cell(frame, task, "blind", all_items=False)
    assert cell.declaration is not None
    found = {s.metric: s for s in metric_scores(frame, bootstrap_of(frame, 20), cell)}
    assert HEADLINE in found and len(found) > 1
    metrics = {m.name: m for m in cell.declaration.scoring.metrics}
    for name, scores in found.items():
        if name not in metrics:
            continue  # per-judge means, declared from what the records hold
        for m, _ in enumerate(frame.models):
            views = cell.model_views(frame, m)
            expected = metrics[name].value(views)
            assert scores.point[m] == pytest.approx(expected, nan_ok=True), (task, name)


def test_a_resample_is_the_metric_on_the_conversations_drawn(frame: Frame) -> None:
    # macro-F1 keeps the labels and corrections of the items it drew from (its resamples are
    # checked against a computation by hand in tests/tasks/test_metric_registry.py)
    bootstrap = bootstrap_of(frame, 3, seed=2)
    cell = build_cell(frame, "behavior", "blind", all_items=False)
    assert cell.declaration is not None
    scores = {s.metric: s for s in metric_scores(frame, bootstrap, cell)}
    metrics = {m.name: m for m in cell.declaration.scoring.metrics}
    for m, _ in enumerate(frame.models):
        views = cell.model_views(frame, m)
        for row in range(3):
            drawn = bootstrap.counts[row]
            repeated = [
                v
                for v in views
                for _ in range(int(drawn[frame.conversations.index(v.record.conversation_id)]))
            ]
            for name in ("score", "micro_f1"):
                expected = metrics[name].value(repeated)
                assert scores[name].samples[row, m] == pytest.approx(expected, nan_ok=True)


def test_counts_are_items_conversations_invalid_and_failed(frame: Frame) -> None:
    cell = build_cell(frame, "emotion", "blind", all_items=False)
    found = counts(frame, cell)
    for model, count in found.items():
        mine = [r for r in frame.records if (r.task, r.model) == ("emotion", model)]
        used = [frame.records[i] for i in cell.rows(frame, frame.models.index(model))]
        assert count.n == len(used)
        assert count.n_conversations == len({r.conversation_id for r in used})
        assert count.n_invalid == sum(r.status == "invalid" for r in used)
        assert count.n_failed == sum(r.status == "failed" for r in mine)
        assert all(r.status != "failed" for r in used)


@pytest.mark.parametrize("task", TASKS)
def test_metrics_read_from_columns_or_shared_readings_equal_their_own_reading(
    frame: Frame, task: str
) -> None:
    # Column metrics are read from the frame and metrics sharing a `values` function share one
    # reading; both must give, resample by resample, what each metric's own reading of the
    # typed views gives.
    bootstrap = bootstrap_of(frame, 7, seed=3)
    cell = build_cell(frame, task, "blind", all_items=False)
    assert cell.declaration is not None
    found = {s.metric: s for s in metric_scores(frame, bootstrap, cell)}
    columns = [m for m in cell.declaration.scoring.metrics if m.column is not None]
    assert any(m.name == HEADLINE for m in columns)
    for metric in cell.declaration.scoring.metrics:
        if metric.name not in found:
            continue
        for m, _ in enumerate(frame.models):
            rows = cell.rows(frame, m)
            views = cell.model_views(frame, m)
            point, drawn = metric.evaluate(views, bootstrap.weights(frame.conversation[rows]))
            np.testing.assert_array_equal(found[metric.name].samples[:, m], drawn)
            assert found[metric.name].point[m] == pytest.approx(point, nan_ok=True)


def test_column_reads_skip_failed_records_and_unparsed_ones_where_asked() -> None:
    class Fake:
        def __init__(self, status: str, score: float | None, scores: dict[str, float]) -> None:
            self.status, self.score, self.scores = status, score, scores

        def value(self, key: str) -> float | None:
            return self.scores.get(key)

    ok, invalid, failed = (
        Fake("ok", 1.0, {"k": 2.0}),
        Fake("invalid", 0.0, {"k": 3.0}),
        Fake("failed", 0.5, {"k": 4.0}),
    )
    assert [Column().of(v) for v in (ok, invalid, failed)] == [1.0, 0.0, None]
    assert [Column("k").of(v) for v in (ok, invalid, failed)] == [2.0, 3.0, None]
    assert [Column("k", parsed_only=True).of(v) for v in (ok, invalid, failed)] == [2.0, None, None]


def test_distinct_pairs_is_numpys_unique_rows() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        values = rng.integers(0, 4, size=(int(rng.integers(1, 40)), 2)) / 3.0
        cells, group = np.unique(values, axis=0, return_inverse=True)
        mine, codes = distinct_pairs(values)
        np.testing.assert_array_equal(mine, cells)
        np.testing.assert_array_equal(codes, group.reshape(-1))


def test_the_frame_numbers_items_in_order_of_first_appearance(frame: Frame) -> None:
    """Planted: the item code is the (conversation, turn, item id) key's rank of first
    appearance, one per distinct key, as a dict of the records' keys numbers them."""
    keys = [(r.conversation_id, r.turn_index, r.item_id) for r in frame.records]
    first = {key: code for code, key in enumerate(dict.fromkeys(keys))}
    assert frame.item.tolist() == [first[key] for key in keys]
    # the trap: the same item id in another conversation or turn is another item
    assert len(first) > len({item_id for _, _, item_id in keys})
    for key, column in frame.scores.items():
        read = [r.scores.get(key) for r in frame.records]
        expected = np.array(read, dtype=np.float64)
        np.testing.assert_array_equal(column, expected)


def test_first_seen_keeps_negative_and_wide_codes_apart() -> None:
    rng = np.random.default_rng(3)
    for spread in (1, 2**40):  # one integer key per row, and rows too wide for one
        columns = [rng.integers(-3, 4, 500) * spread, rng.integers(0, 3, 500) * spread]
        columns.append(rng.integers(0, 5, 500))
        rows = list(zip(*(c.tolist() for c in columns), strict=True))
        first = {row: code for code, row in enumerate(dict.fromkeys(rows))}
        assert _first_seen(*columns).tolist() == [first[row] for row in rows]
