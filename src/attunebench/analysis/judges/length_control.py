"""The judges' win rate for a model at equal length (length-controlled, Arena-style).

A logistic regression of the win on d = (a - b) / (a + b), the normalised length difference
(Li et al. 2024, "Does style matter?"), read at d = 0. Its interval is the estimating-function
bootstrap (Hu & Kalbfleisch 2000): each resample takes one Newton step from the full-data fit,
with sums over clusters, so no resample is refitted.
"""

from __future__ import annotations

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Finish, Minimum
from attunebench.analysis.frame import FloatArray
from attunebench.analysis.judges.panel import SPLIT, majority, vote_counts
from attunebench.analysis.judges.verdict_table import FIRST, JUDGED, VerdictTable, win_for
from attunebench.analysis.schema import Estimate
from attunebench.analysis.sums import estimate
from attunebench.stats import ridge_logistic

RIDGE = 1e-6  # keeps the fit finite when every verdict went one way


def logistic_fit(x: FloatArray, y: FloatArray) -> FloatArray:
    """Intercept and slope of a logistic regression of y (in [0, 1]) on x."""
    return ridge_logistic(np.stack([np.ones_like(x), x], axis=1), y, RIDGE)


def _one_step(beta: FloatArray) -> Finish:
    """From summed (score, score * x, info, info * x, info * x^2): sigmoid of the intercept
    after one Newton step from `beta`."""

    def finish(sums: FloatArray) -> FloatArray:
        g0, g1, h00, h01, h11 = (sums[..., i] for i in range(5))
        det = h00 * h11 - h01 * h01 + RIDGE
        intercept = beta[0] + (h11 * g0 - h01 * g1) / det
        out: FloatArray = 1.0 / (1.0 + np.exp(-intercept))
        return out

    return finish


def length_controlled(
    table: VerdictTable, model: str, bootstrap: ClusterBootstrap, minimum: Minimum
) -> Estimate:
    mask = np.array([s == model for s in table.subject], dtype=bool) & table.is_task(JUDGED)
    counts, slot_of, conversation = vote_counts(table, mask)
    voted = counts.sum(axis=1) > 0
    if not voted.any():
        return Estimate(reason="no usable verdict")
    rows = np.flatnonzero(mask)
    lengths = np.zeros((len(counts), 2))
    lengths[slot_of] = table.lengths[rows]
    picks = majority(counts)
    y = np.where(picks == SPLIT, 0.5, win_for(picks, FIRST))[voted]
    total = lengths[voted].sum(axis=1)
    x = np.where(total > 0, (lengths[voted, 0] - lengths[voted, 1]) / np.maximum(total, 1), 0.0)
    beta = logistic_fit(x, y)
    p = 1.0 / (1.0 + np.exp(-(beta[0] + beta[1] * x)))
    score, info = y - p, p * (1 - p)
    columns = np.stack([score, score * x, info, info * x, info * x * x], axis=1)
    # At the fit the summed score is zero, so the full-data step is nil and the value is the fit.
    return estimate(
        bootstrap, minimum, columns, conversation[voted], _one_step(beta), "no usable verdict"
    )
