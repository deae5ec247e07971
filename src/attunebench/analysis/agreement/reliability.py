"""How reliably a task ranks the models: split-half reliability, Spearman-Brown corrected.

The corrected mean rho, 2r / (1 + r), over many random splits of the conversations (Spearman
1910, Brown 1910; Voorhees & Buckley 2002). Each resample's value is the same statistic over
several splits of its own: one split per resample would describe the luck of a single split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from attunebench.analysis.bootstrap import ClusterBootstrap, containing, percentile_interval
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import FloatArray, Frame, IntArray
from attunebench.stats import safe_ratio

SPLITS = 200  # random splits averaged for the point value
RESAMPLE_SPLITS = 10  # random splits averaged in each resample
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


def spearman_rho(x: FloatArray, y: FloatArray) -> FloatArray:
    """Spearman's rho along the last axis: Pearson's r of average ranks."""
    return pearson_r(stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1))


def pearson_r(x: FloatArray, y: FloatArray) -> FloatArray:
    """Pearson's r along the last axis."""
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    spread = np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum(axis=-1))
    return safe_ratio((dx * dy).sum(axis=-1), spread)


def split_draws(rng: np.random.Generator, weights: FloatArray, splits: int) -> FloatArray:
    """For each row of cluster counts, `splits` random splits of its draws into two halves: how
    many draws of each cluster go to the first half.

    A resample's draws, duplicates included, are split as one (splitting the distinct clusters
    would leave halves of uneven size and a biased, too-wide interval): each draw gets a uniform
    random key, and the half is the draws with the smallest keys."""
    draws = weights.astype(np.int64)
    rows, clusters = draws.shape
    sizes = draws.sum(axis=1)
    total = int(sizes.max()) if rows else 0
    if rows == 0 or total == 0:
        return np.zeros((rows * splits, clusters))
    # each row's draws, cluster by cluster, padded to the largest row with keys that sort
    # after every real draw's
    filled = np.arange(total)[None, :] < sizes[:, None]
    keys = rng.random((rows, splits, total))
    if not filled.all():  # a resample's rows hold n draws each: no padding to add
        keys += ~filled[:, None, :]
    taken = keys <= _largest_of_half(keys, sizes // 2)
    # a row's draws are its clusters' in turn: a cluster's count in the half is the number
    # taken among its run of draws, read from the running count at the runs' ends (by flat
    # index into every split's running count: a gather along the last axis costs twice that)
    counted = np.zeros((rows, splits, total + 1), dtype=np.int32)
    np.cumsum(taken, axis=-1, out=counted[..., 1:])
    ends = np.zeros((rows, 1, clusters + 1), dtype=np.int64)
    np.cumsum(draws, axis=1, out=ends[:, 0, 1:])
    each = np.arange(0, counted.size, total + 1, dtype=np.int64).reshape(rows, splits, 1)
    at_ends = counted.reshape(-1).take(each + ends)
    return np.diff(at_ends, axis=-1).reshape(rows * splits, clusters).astype(np.float64)


def _largest_of_half(keys: FloatArray, halves: IntArray) -> FloatArray:
    """Per row and split, the largest of the `halves` (per row) smallest keys, -1 where a half is
    empty. The keys are random doubles: two alike, one of them at that edge, would take one draw
    too many, about once in 2^53 pairs."""
    half = int(halves[0])
    if half > 0 and (halves == half).all():  # a resample's rows all hold n draws: one partition
        return np.partition(keys, half - 1, axis=-1)[..., half - 1 : half]
    ordered = np.sort(keys, axis=-1)
    edge = np.take_along_axis(ordered, np.maximum(halves - 1, 0)[:, None, None], axis=-1)
    return np.where(halves[:, None, None] > 0, edge, -1.0)


def mean_split_rho(
    table: ConversationTable, weights: FloatArray, splits: int, rng: np.random.Generator
) -> FloatArray:
    """For each row of cluster counts: the mean rho between the two halves' rankings over `splits`
    random splits. Only clusters with items of the task are split: an empty one would make a
    half smaller without telling the halves apart."""
    models = table.sums.shape[1]
    used = table.counts.sum(axis=1) > 0
    stacked = np.concatenate([table.sums[used], table.counts[used]], axis=1)  # (used, 2 models)
    kept = weights[:, used]
    first = split_draws(rng, kept, splits) @ stacked
    second = np.repeat(kept @ stacked, splits, axis=0) - first
    rho = spearman_rho(
        safe_ratio(first[:, :models], first[:, models:]),
        safe_ratio(second[:, :models], second[:, models:]),
    ).reshape(len(weights), splits)
    defined = ~np.isnan(rho)
    return safe_ratio(np.where(defined, rho, 0.0).sum(axis=1), defined.sum(axis=1).astype(float))


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
    if table.sums.shape[1] < 3 or (table.counts.sum(axis=1) > 0).sum() < 2:
        return SplitHalf(np.nan, np.full(resamples, np.nan), np.nan, np.nan)

    value = float(spearman_brown(mean_split_rho(table, np.ones((1, clusters)), SPLITS, rng))[0])
    weights = bootstrap.counts[:resamples]
    drawn = spearman_brown(mean_split_rho(table, weights, RESAMPLE_SPLITS, rng))
    low, high = percentile_interval(drawn[:, None], bootstrap.confidence)
    return SplitHalf(value, drawn, *containing(value, float(low[0]), float(high[0])))
