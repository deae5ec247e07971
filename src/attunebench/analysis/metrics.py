"""The metrics a report computes per (task, variant, model), in two bootstrap-friendly shapes.

- `SumMetric`: a function of summed per-item statistics (a mean is sum/count; macro-F1 is a
  function of per-label true positive, false positive and false negative counts). Resampled
  sums are one matrix product with the shared cluster-count matrix, so these use every resample.
- `TableMetric`: a corpus statistic of paired values that is not a function of sums
  (Spearman's rho). Items are compressed into cells of distinct (x, y) values; a resample is
  then a weighted table, one matrix product too. The table is as wide as the number of
  distinct pairs (up to one per item), so these use the first `corpus_resamples` resamples.

Every task gets its headline (`score`, the mean of the records' primary score) and the mean of
each key of the records' `scores` dicts; `emotion` and `behavior` add label metrics, and
`emotion` adds Spearman's rho for each numeric dimension its gold has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from attunebench.analysis.bootstrap import safe_ratio
from attunebench.analysis.frame import BoolArray, FloatArray, Frame, IntArray
from attunebench.analysis.labels import LABEL_SETS, macro_f1, micro_f1
from attunebench.records import ItemRecord

HEADLINE = "score"
HEADLINE_LABELS = {
    "emotion": "primary-label accuracy",
    "behavior": "per-item F1",
    "preference": "accuracy in both orders (0.5 when inconsistent)",
    "response": "judge win rate",
}
KEY_LABELS = {"consistent": "position consistency"}
NUMERIC_DIMENSIONS = ("intensity", "valence", "arousal")


@dataclass(frozen=True)
class SumMetric:
    """`stats(frame, mask)` gives per-item statistics (items, k); `finish` maps their sums
    (..., k) to the metric."""

    name: str
    description: str
    stats: Callable[[Frame, BoolArray], FloatArray]
    finish: Callable[[FloatArray], FloatArray]


@dataclass(frozen=True)
class TableMetric:
    """`cells(records)` gives each item's cell (-1: unusable) and each cell's x and y values;
    `statistic(x, y, weights)` evaluates each row of a (resamples x cells) weight matrix."""

    name: str
    description: str
    cells: Callable[[Sequence[ItemRecord]], tuple[IntArray, FloatArray, FloatArray]]
    statistic: Callable[[FloatArray, FloatArray, FloatArray], FloatArray]


Metric = SumMetric | TableMetric


def _mean(sums: FloatArray) -> FloatArray:
    return safe_ratio(sums[..., 0], sums[..., 1])


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else np.nan


def _field(value: object, name: str) -> object:
    return value.get(name) if isinstance(value, dict) else None


def key_mean(key: str) -> SumMetric:
    """Mean of `scores[key]` over the records that have it."""

    def stats(frame: Frame, mask: BoolArray) -> FloatArray:
        values = frame.scores[key][mask]
        defined = ~np.isnan(values)
        return np.stack([np.where(defined, values, 0.0), defined.astype(np.float64)], axis=1)

    return SumMetric(key, KEY_LABELS.get(key, f"mean of {key}"), stats, _mean)


def label_metrics(table: FloatArray, what: str, micro: bool) -> list[SumMetric]:
    """Macro- (and micro-) F1 from a cell's label counts (`labels.label_counts`)."""

    def stats(frame: Frame, mask: BoolArray) -> FloatArray:
        return table

    metrics = [SumMetric("macro_f1", f"macro-F1 over {what}", stats, macro_f1)]
    if micro:
        metrics.append(SumMetric("micro_f1", f"micro-F1 over {what}", stats, micro_f1))
    return metrics


def weighted_midranks(values: FloatArray, weights: FloatArray) -> FloatArray:
    """Average ranks of each value within each weighted resample (rows of `weights`)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new_group = np.r_[True, ordered[1:] != ordered[:-1]]
    group_of = np.cumsum(new_group) - 1
    group_weight = np.add.reduceat(weights[:, order], np.flatnonzero(new_group), axis=1)
    before = np.cumsum(group_weight, axis=1) - group_weight
    ranks = np.empty_like(weights)
    ranks[:, order] = (before + (group_weight + 1.0) / 2.0)[:, group_of]
    return ranks


def weighted_pearson(x: FloatArray, y: FloatArray, weights: FloatArray) -> FloatArray:
    """Pearson's r of ranks on each weighted resample; NaN where either side is constant."""
    total = weights.sum(axis=1, keepdims=True)
    dx = x - safe_ratio((weights * x).sum(axis=1, keepdims=True), total)
    dy = y - safe_ratio((weights * y).sum(axis=1, keepdims=True), total)
    vx, vy = (weights * dx * dx).sum(axis=1), (weights * dy * dy).sum(axis=1)
    # ranks are of the order of `total`, so a constant side leaves only rounding noise
    tiny = 1e-10 * np.maximum(total[:, 0], 1.0) ** 3
    spread = np.where((vx > tiny) & (vy > tiny), np.sqrt(vx * vy), 0.0)
    return safe_ratio((weights * dx * dy).sum(axis=1), spread)


def weighted_spearman(x: FloatArray, y: FloatArray, weights: FloatArray) -> FloatArray:
    """Spearman's rho on each resample, as Pearson's r of average ranks (Spearman 1904).

    Row b of `weights` repeats value pair i `weights[b, i]` times; with unit weights this
    equals `scipy.stats.spearmanr(x, y)`.
    """
    if len(x) == 0:
        return np.full(weights.shape[0], np.nan)
    return weighted_pearson(weighted_midranks(x, weights), weighted_midranks(y, weights), weights)


def spearman_metric(dimension: str) -> TableMetric:
    """Spearman between predicted and gold values of one numeric dimension (answered items)."""

    def cells(records: Sequence[ItemRecord]) -> tuple[IntArray, FloatArray, FloatArray]:
        predicted = np.array([_number(_field(r.prediction, dimension)) for r in records])
        gold = np.array([_number(_field(r.gold, dimension)) for r in records])
        usable = ~np.isnan(predicted) & ~np.isnan(gold)
        pairs, cell = np.unique(np.stack([predicted[usable], gold[usable]], axis=1), axis=0,
                                return_inverse=True)  # fmt: skip
        cell_of = np.full(len(records), -1, dtype=np.int64)
        cell_of[usable] = cell.reshape(-1)
        return cell_of, pairs[:, 0].copy(), pairs[:, 1].copy()

    return TableMetric(
        f"{dimension}_spearman", f"Spearman's rho, predicted vs gold {dimension}", cells,
        weighted_spearman,
    )  # fmt: skip


def task_metrics(
    task: str, frame: Frame, mask: BoolArray, label_table: FloatArray | None
) -> list[Metric]:
    """The secondary metrics of one cell (the headline is computed apart).

    `label_table` is the cell's label counts, for tasks with label sets.
    """
    present = frame.scores.items()
    metrics: list[Metric] = [key_mean(k) for k, v in sorted(present) if (~np.isnan(v[mask])).any()]
    if task in LABEL_SETS and label_table is not None:
        metrics += label_metrics(label_table, LABEL_SETS[task][1], micro=task == "behavior")
    if task == "emotion":
        records = frame.records_at(mask)
        metrics += [
            spearman_metric(d)
            for d in NUMERIC_DIMENSIONS
            if any(_field(r.gold, d) is not None for r in records)
        ]
    return metrics
