"""How reliably a task ranks the models: split-half reliability, Spearman-Brown corrected.

The conversations are split at random into two halves, the models ranked on each half, and the
two rankings correlated (Spearman's rho); the Spearman-Brown formula, 2r / (1 + r), takes the
half-length reliability to the full length (Spearman 1910, Brown 1910; for rankings of
systems, see Voorhees & Buckley 2002, "The effect of topic set size on retrieval experiment
error"). The point value is the corrected mean rho over many splits; the interval comes from
the shared cluster-bootstrap resamples, each split at random once, so it carries both the
sampling and the split.

Two tasks' rankings can agree at most as well as their reliabilities allow: the ceiling is
sqrt(rel_a x rel_b), and rho / ceiling is the disattenuated correlation (Spearman 1904).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from attunebench.analysis.bootstrap import ClusterBootstrap, percentile_interval
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import FloatArray, Frame
from attunebench.tasks.metrics import safe_ratio

SPLITS = 200
RESAMPLES = 500


@dataclass(frozen=True)
class ConversationTable:
    """Each model's score sum and item count per cluster (clusters x models)."""

    sums: FloatArray
    counts: FloatArray


def conversation_table(
    frame: Frame, bootstrap: ClusterBootstrap, cell: Cell, models: list[int]
) -> ConversationTable:
    shape = (bootstrap.n_clusters, len(models))
    sums, counts = np.zeros(shape), np.zeros(shape)
    for column, model in enumerate(models):
        rows = cell.rows(frame, model)
        clusters = bootstrap.cluster_of[frame.conversation[rows]]
        np.add.at(sums[:, column], clusters, frame.score[rows])
        np.add.at(counts[:, column], clusters, 1.0)
    return ConversationTable(sums, counts)


def row_spearman(x: FloatArray, y: FloatArray) -> FloatArray:
    """Spearman's rho between the rows of x and y (models along the last axis)."""
    rx, ry = stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1)
    dx = rx - rx.mean(axis=-1, keepdims=True)
    dy = ry - ry.mean(axis=-1, keepdims=True)
    spread = np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum(axis=-1))
    return safe_ratio((dx * dy).sum(axis=-1), spread)


def _split_half(table: ConversationTable, weights: FloatArray, halves: FloatArray) -> FloatArray:
    """rho between the two halves' rankings, per row of (weights, halves)."""
    first, second = weights * halves, weights * (1.0 - halves)
    mean_a = safe_ratio(first @ table.sums, first @ table.counts)
    mean_b = safe_ratio(second @ table.sums, second @ table.counts)
    return row_spearman(mean_a, mean_b)


def spearman_brown(rho: FloatArray) -> FloatArray:
    """Full-length reliability from half-length rho, clipped to [-1, 1]."""
    return np.clip(safe_ratio(2.0 * rho, 1.0 + rho), -1.0, 1.0)


@dataclass(frozen=True)
class SplitHalf:
    value: float  # NaN where undefined
    samples: FloatArray  # (RESAMPLES,) per resample
    low: float
    high: float


def split_half(
    table: ConversationTable, bootstrap: ClusterBootstrap, rng: np.random.Generator
) -> SplitHalf:
    """The reliability of the ranking of the table's models (NaN with fewer than 3)."""
    clusters = table.sums.shape[0]
    resamples = min(RESAMPLES, bootstrap.resamples)
    if table.sums.shape[1] < 3 or clusters < 2:
        return SplitHalf(np.nan, np.full(resamples, np.nan), np.nan, np.nan)

    # Each split puts half the clusters (rounded down) in the first half.
    def halves(count: int) -> FloatArray:
        keys = rng.random((count, clusters))
        ranks = keys.argsort(axis=1).argsort(axis=1)
        chosen: FloatArray = (ranks < clusters // 2).astype(np.float64)
        return chosen

    ones = np.ones((SPLITS, clusters))
    rho = _split_half(table, ones, halves(SPLITS))
    value = (
        float(spearman_brown(np.array([np.nanmean(rho)]))[0]) if np.isfinite(rho).any() else np.nan
    )
    drawn = spearman_brown(_split_half(table, bootstrap.counts[:resamples], halves(resamples)))
    low, high = percentile_interval(drawn[:, None], bootstrap.confidence)
    return SplitHalf(value, drawn, float(low[0]), float(high[0]))
