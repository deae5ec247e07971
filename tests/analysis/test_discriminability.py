"""Separability and spread over noise: identical models, planted gaps, the ranking."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from attunebench.analysis.discriminability import discriminability, ranked
from attunebench.analysis.loading import Runs
from attunebench.analysis.scores import MetricScores
from attunebench.analysis.summary import Options, build_summary


def scores(point: list[float], half_width: float) -> MetricScores:
    p = np.array(point)
    return MetricScores("t", "", "score", p, p - half_width, p + half_width, np.empty((0, len(p))))


def test_hand_computed_separability_and_spread_over_noise() -> None:
    result = discriminability(scores([0.1, 0.2, 0.6], 0.1), ["a", "b", "c"])
    # a/b overlap ([0.0, 0.2] vs [0.1, 0.3]); a/c and b/c do not: 2 of 3 pairs
    assert result.separability == pytest.approx(2 / 3)
    assert result.spread == pytest.approx(0.5)
    assert result.mean_ci_width == pytest.approx(0.2)
    assert result.spread_over_noise == pytest.approx(2.5)


def test_too_few_models_is_null_with_a_reason() -> None:
    result = discriminability(scores([0.4], 0.1), ["a"])
    assert result.separability is None and result.reason is not None


def test_identical_models_do_not_separate_and_planted_gaps_do(load: Callable[..., Runs]) -> None:
    accuracy = {
        f"m/model{i}": {"emotion": 0.5, "preference": 0.1 + 0.2 * i} for i in range(4)
    }
    summary = build_summary(load(accuracy, conversations=80), Options(resamples=500))
    by_task = {d.task: d for d in summary.discriminability}
    assert by_task["emotion"].separability is not None and by_task["emotion"].separability < 0.34
    assert by_task["preference"].separability == 1.0
    assert [d.task for d in summary.discriminability] == ["preference", "emotion"]
    assert by_task["preference"].rank == 1 and by_task["emotion"].rank == 2
    spread = by_task["preference"].spread_over_noise
    assert spread is not None and by_task["emotion"].spread_over_noise is not None
    assert spread > 2 * by_task["emotion"].spread_over_noise


def test_uncomputable_tasks_come_last_unranked() -> None:
    computed = discriminability(scores([0.1, 0.6], 0.1), ["a", "b"])
    empty = discriminability(scores([0.3], 0.1), ["a"]).model_copy(update={"task": "a-task"})
    order = ranked([empty, computed])
    assert [e.rank for e in order] == [1, None]
