"""The vectorised metrics equal the tasks' registered metric functions, and bootstrap alike."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from attunebench.analysis.bootstrap import ClusterBootstrap
from attunebench.analysis.frame import Frame
from attunebench.analysis.labels import LABEL_SETS, label_counts
from attunebench.analysis.loading import Runs
from attunebench.analysis.metrics import GenericMetric, weighted_spearman
from attunebench.analysis.scores import _generic_metric, headline, secondary
from attunebench.tasks import metrics as registered

TASKS = {"emotion": 0.6, "behavior": 0.5, "preference": 0.55, "response": 0.4}

def shared(frame: Frame, resamples: int, seed: int = 0) -> ClusterBootstrap:
    """Conversation resamples for a frame."""
    rng = np.random.default_rng(seed)
    return ClusterBootstrap.create(np.arange(len(frame.conversations)), resamples, rng)



def test_weighted_spearman_with_unit_weights_is_scipys_rho_with_ties() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.integers(1, 6, 80).astype(float), rng.integers(1, 4, 80).astype(float)
    rho = weighted_spearman(x, y, np.ones((1, 80)))[0]
    assert rho == pytest.approx(stats.spearmanr(x, y).statistic)


def test_weighted_spearman_weights_repeat_pairs() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=30), rng.normal(size=30)
    weights = rng.integers(0, 4, size=(5, 30)).astype(float)
    for row in range(5):
        repeated = np.repeat(np.arange(30), weights[row].astype(int))
        expected = stats.spearmanr(x[repeated], y[repeated]).statistic
        assert weighted_spearman(x, y, weights[row : row + 1])[0] == pytest.approx(expected)


def test_a_constant_side_has_no_correlation() -> None:
    assert np.isnan(weighted_spearman(np.ones(10), np.arange(10.0), np.ones((1, 10)))[0])


@pytest.fixture
def runs(load: Callable[..., Runs]) -> Runs:
    accuracy = {"m/a": TASKS, "m/b": {t: p * 0.7 for t, p in TASKS.items()}}
    return load(accuracy, conversations=30, items_per_conversation=6, invalid_rate=0.1,
                failed_rate=0.05, conversation_spread=0.4)  # fmt: skip


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_secondary_metric_equals_the_registered_function(runs: Runs, task: str) -> None:
    frame = Frame.from_records(runs.records)
    boot = shared(frame, 50, 0)
    mask = frame.cell(task, "blind") & frame.scored
    table = None
    if task in LABEL_SETS:
        table = label_counts(frame.records_at(mask), LABEL_SETS[task][0])[1]
    computed = secondary(frame, boot, task, "blind", 50, table)
    assert computed, "every task has secondary metrics"
    for scores in computed:
        if "[" in scores.metric:
            continue  # per-judge means have no registered twin
        function = registered.METRICS.get(f"{task}.{scores.metric}")
        for m, model in enumerate(frame.models):
            records = [r for r in frame.records_at(frame.cell(task, "blind")) if r.model == model]
            expected = function(records)
            assert expected is not None, (task, scores.metric)
            assert scores.point[m] == pytest.approx(expected), (task, scores.metric, model)


def test_the_headline_is_the_mean_score_over_ok_and_invalid(runs: Runs) -> None:
    frame = Frame.from_records(runs.records)
    boot = shared(frame, 50, 0)
    point = headline(frame, boot, "emotion", "blind").point
    for m, model in enumerate(frame.models):
        records = [r for r in runs.records if r.task == "emotion" and r.model == model]
        assert point[m] == pytest.approx(registered.mean_score(records))


def test_generic_path_resamples_exactly_like_the_vectorised_one(runs: Runs) -> None:
    frame = Frame.from_records(runs.records)
    boot = shared(frame, 40, 3)
    mask = frame.cell("behavior", "blind") & frame.scored
    fast = headline(frame, boot, "behavior", "blind")
    generic = GenericMetric("mean", registered.mean_score)
    point, samples = _generic_metric(frame, boot, mask, generic, 40)
    np.testing.assert_allclose(point, fast.point)
    np.testing.assert_allclose(samples, fast.samples)
