"""The mean of the tasks' rho over the shared resamples: a resample where no task ranks (every
model tied) is undefined and left out, without a warning, and a task with no rho at all is not
counted in the mean."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from attunebench.analysis.resampled import Resampled, Resampler
from attunebench.simulators.ranking import _mean_rho

NAN = np.nan


def test_the_mean_rho_leaves_out_resamples_where_no_task_ranks() -> None:
    resampler = Resampler.over([f"c{i}" for i in range(5)], resamples=5, seed=0)
    emotion = Resampled(0.5, np.array([1.0, NAN, 0.2, 0.4, 0.6]), 5)
    rating = Resampled(0.1, np.array([0.0, NAN, NAN, 0.2, 0.6]), 5)
    unranked = Resampled(NAN, np.full(5, NAN), 5)  # fewer than three models: no rho
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = _mean_rho([emotion, rating, unranked], resampler)
    assert found.value == pytest.approx(0.3)
    # The resamples' means: 0.5, undefined, 0.2 (rating undefined there), 0.3, 0.6.
    assert found.ci_low is not None and found.ci_high is not None
    assert 0.2 <= found.ci_low <= 0.3 <= found.ci_high <= 0.6


def test_no_task_with_a_rho_gives_a_reason() -> None:
    resampler = Resampler.over(["c0", "c1"], resamples=3, seed=0)
    found = _mean_rho([Resampled(NAN, np.full(3, NAN), 2)], resampler)
    assert found.value is None and "models to rank" in str(found.reason)
