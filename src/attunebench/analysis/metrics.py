"""The secondary metrics of each task, and how each is bootstrapped.

The metrics are the tasks' own: those registered in `tasks.metrics.METRICS` (`task.name`,
`metric(records) -> float | None`), less those equal to the headline (the mean `score`), plus
one mean per judge for every per-judge score key (`win_vs_chosen[judge]`, ...). Most have a
vectorised twin here that gives the same value (tests check it against the registered
function) and bootstraps in one matrix product:

- `SumMetric`: a function of summed per-item statistics (a mean is sum/count; macro-F1 is a
  function of per-label true positive, false positive and false negative counts);
- `TableMetric`: Spearman's rho. Items are compressed into cells of distinct (predicted, gold)
  pairs; a resample is a weighted table. The table can be as wide as the items, so these use
  the first `corpus_resamples` resamples.

A registered metric without a twin is bootstrapped generically (`GenericMetric`): it is called
on the resampled records of each of the first `corpus_resamples` resamples (slower, exact).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from attunebench.analysis import judges as audit
from attunebench.analysis.bootstrap import safe_ratio
from attunebench.analysis.frame import STATUS_CODES, BoolArray, FloatArray, Frame, IntArray
from attunebench.analysis.labels import LABEL_SETS, macro_f1, micro_f1
from attunebench.records import ItemRecord
from attunebench.tasks import metrics as registered

HEADLINE = "score"
HEADLINE_LABELS = {
    "emotion": "primary-label accuracy",
    "behavior": "per-item F1",
    "preference": "accuracy in both orders (0.5 when inconsistent)",
    "response": "judge win rate",
}
NUMERIC_DIMENSIONS = ("intensity", "valence", "arousal")
Stats = Callable[[Frame, BoolArray], FloatArray]
LabelTable = FloatArray


@dataclass(frozen=True)
class SumMetric:
    """`stats(frame, mask)`: per-item statistics (items, k); `finish`: their sums -> metric."""

    name: str
    stats: Stats
    finish: Callable[[FloatArray], FloatArray]


@dataclass(frozen=True)
class TableMetric:
    """`cells(records)`: each item's cell (-1: unusable) and each cell's x and y;
    `statistic(x, y, weights)`: the metric of each row of a (resamples x cells) weight matrix."""

    name: str
    cells: Callable[[Sequence[ItemRecord]], tuple[IntArray, FloatArray, FloatArray]]
    statistic: Callable[[FloatArray, FloatArray, FloatArray], FloatArray]


@dataclass(frozen=True)
class GenericMetric:
    name: str
    function: registered.Metric


Metric = SumMetric | TableMetric | GenericMetric


def _ratio(sums: FloatArray) -> FloatArray:
    return safe_ratio(sums[..., 0], sums[..., 1])


def key_mean(name: str, key: str, parsed_only: bool) -> SumMetric:
    """Mean of `scores[key]` where present (over `ok` records only, if `parsed_only`)."""

    def stats(frame: Frame, mask: BoolArray) -> FloatArray:
        values = frame.scores[key][mask] if key in frame.scores else np.full(mask.sum(), np.nan)
        if parsed_only:
            values = np.where(frame.status[mask] == STATUS_CODES["ok"], values, np.nan)
        defined = ~np.isnan(values)
        return np.stack([np.where(defined, values, 0.0), defined.astype(np.float64)], axis=1)

    return SumMetric(name, stats, _ratio)


def audit_metric(name: str, statistic: str) -> SumMetric:
    """One `judge.audit` statistic (e.g. the flip rate of preference records)."""

    def stats(frame: Frame, mask: BoolArray) -> FloatArray:
        if statistic == "flip_rate":
            return audit.flip_counts(frame.records_at(mask))
        rows = [audit.audit_counts(r) for r in frame.records_at(mask)]
        return np.array(rows).reshape(len(rows), audit.WIDTH)

    def finish(sums: FloatArray) -> FloatArray:
        if statistic == "flip_rate":
            return _ratio(sums)
        return audit.statistics(sums)[statistic]

    return SumMetric(name, stats, finish)


def label_metric(
    name: str, table: LabelTable | None, finish: Callable[[FloatArray], FloatArray]
) -> SumMetric:
    def stats(frame: Frame, mask: BoolArray) -> FloatArray:
        if table is None:
            raise ValueError(f"{name} needs the cell's label counts")
        return table

    return SumMetric(name, stats, finish)


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
    equals `scipy.stats.spearmanr(x, y)`. Fewer than three pairs give NaN, as the task's
    metric gives None.
    """
    if len(x) == 0:
        return np.full(len(weights), np.nan)
    rho = weighted_pearson(weighted_midranks(x, weights), weighted_midranks(y, weights), weights)
    return np.where(weights.sum(axis=1) >= 3, rho, np.nan)


def _field(value: object, name: str) -> object:
    return value.get(name) if isinstance(value, dict) else None


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) else np.nan


def spearman_metric(name: str, dimension: str) -> TableMetric:
    """Spearman between predicted and gold values of one numeric dimension (parsed answers)."""

    def cells(records: Sequence[ItemRecord]) -> tuple[IntArray, FloatArray, FloatArray]:
        pairs_of = [
            (r.prediction.get(dimension), r.gold.get(dimension))
            if r.status == "ok" and isinstance(r.prediction, dict) and isinstance(r.gold, dict)
            else (None, None)
            for r in records
        ]  # one pass, inline: this runs over every emotion record
        predicted = np.array([_number(p) for p, _ in pairs_of])
        gold = np.array([_number(g) for _, g in pairs_of])
        usable = ~np.isnan(predicted) & ~np.isnan(gold)
        pairs, cell = np.unique(np.stack([predicted[usable], gold[usable]], axis=1), axis=0,
                                return_inverse=True)  # fmt: skip
        cell_of = np.full(len(records), -1, dtype=np.int64)
        cell_of[usable] = cell.reshape(-1)
        return cell_of, pairs[:, 0].copy(), pairs[:, 1].copy()

    return TableMetric(name, cells, weighted_spearman)


def _twin(task: str, name: str, table: LabelTable | None) -> Metric | None:
    """The vectorised twin of a registered metric, where there is one."""
    if task in LABEL_SETS and name in ("macro_f1", "micro_f1"):
        return label_metric(name, table, macro_f1 if name == "macro_f1" else micro_f1)
    means = {
        ("emotion", "jaccard"): ("jaccard", False),
        ("preference", "consistency"): ("consistent", True),
        ("response", "win_vs_chosen"): ("win_vs_chosen", True),
        ("response", "win_vs_rejected"): ("win_vs_rejected", True),
        ("response", "rubric"): ("rubric", True),
        **{("emotion", f"{d}_mae"): (f"{d}_abs_error", True) for d in NUMERIC_DIMENSIONS},
    }
    if (task, name) in means:
        return key_mean(name, *means[task, name])
    if task == "emotion" and name.endswith("_spearman"):
        return spearman_metric(name, name.removesuffix("_spearman"))
    if name in audit.UNDEFINED and task in ("preference", audit.AUDIT_TASK):
        return audit_metric(name, name)
    return None


def task_metrics(
    task: str, frame: Frame, mask: BoolArray, label_table: LabelTable | None
) -> list[Metric]:
    """The secondary metrics of one cell: registered ones, then one mean per judge and key.

    (A metric no model has a value for, such as arousal where the gold has none, is dropped
    by the caller.)
    """
    out: list[Metric] = []
    for full in registered.metrics_for(task):
        function = registered.METRICS.get(full)
        if function is registered.mean_score:
            continue  # the headline
        name = full.split(".", 1)[1]
        out.append(_twin(task, name, label_table) or GenericMetric(name, function))
    scored = frame.scores.items()
    per_judge = [k for k, v in sorted(scored) if "[" in k and (~np.isnan(v[mask])).any()]
    out += [key_mean(key, key, parsed_only=True) for key in per_judge]
    return out
