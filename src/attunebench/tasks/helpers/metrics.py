"""Metrics, each defined once: a function of per-item values and per-item weights.

A task declares its metrics. Each metric has two parts:

- `values(records)`: one row of numbers per record (items x k), read from the task's typed
  predictions and gold; NaN marks "not defined for this item".
- `statistic(values, weights)`: the metric for every row of weights at once.

With weights of 1 (`Weights.unit`: each item 1, its conversation kept) the statistic is the
metric's value. With a cluster bootstrap's resample counts as weights (each item weighted by
how often its conversation was drawn), it is that resample's value, for all resamples at once,
with no second implementation to keep in step; with the leave-one-out rows of `Weights`, the
cluster jackknife's values. A mean is a weighted sum over a weighted count; F1 comes from
weighted true positive, false positive and false negative sums (macro-F1's ratio-bias
correction also reads how they spread over the conversations), within each corpus part and
averaged over the parts (`within_parts`); Spearman's rho is Pearson's r of weighted average
ranks. `Weights` keeps the resample counts per cluster, so sums are one
matrix product over clusters, and rank statistics need only the total weight of each distinct
value.

Reading values is the costly part of an analysis (a Python call per record), so a metric says
what it reads. A `Column` metric reads a number every record already holds (its score, or one
of its `scores`), which an analysis takes from its numeric columns without reading a record
into its typed view. Metrics built on the same `values` function (micro and macro F1 of the
same label sets; Brier, ECE and AUROC of the same choice rows) share one reading of the
records: the analysis reads each distinct function once.

Metrics register by name in `METRICS` (`task.metric`), so a report says exactly which
definition produced a number; `None`, never NaN, means undefined on these items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import chain
from operator import attrgetter
from typing import Any, TypeVar

import numpy as np

from attunebench.registry import Registry
from attunebench.stats import FloatArray, IntArray, Weights, safe_ratio

# Per-item values: one row per record, or rows with the index of the record each belongs to
# (a record with several PANAS items gives several rows, all weighted as that record).
Found = FloatArray | tuple[FloatArray, IntArray]
Values = Callable[[Sequence[Any]], Found]
Statistic = Callable[[FloatArray, Weights], FloatArray]
T = TypeVar("T")


@dataclass(frozen=True)
class Column:
    """A number every record holds: its score (`key` None) or `scores[key]`, None where absent;
    or with `flag`, 1 where the record carries that flag and 0 where not. None for a failed
    record; `parsed_only` keeps answers that parsed (an invalid one has none)."""

    key: str | None = None
    parsed_only: bool = False
    flag: str | None = None

    def of(self, view: Any) -> float | None:
        """The number of one record's view."""
        if view.status == "failed" or (self.parsed_only and view.status != "ok"):
            return None
        if self.flag is not None:
            return float(self.flag in view.flags)
        number: float | None = view.score if self.key is None else view.value(self.key)
        return number


@dataclass(frozen=True)
class Metric:
    """One metric of one task; see the module docstring. `column`, where set, says that
    `values` reads only that column of each record."""

    name: str
    description: str
    values: Values
    statistic: Statistic
    higher_is_better: bool = True
    column: Column | None = None
    # A metric of a reference the task records in the run (`Scoring.recorded_references`), read
    # from the models' records but about the reference: shown on its row, never a model's.
    of_references: bool = False
    # The range of a statistic whose bootstrap spread understates its variance where a few
    # clusters decide it (macro-F1 over a label seen in one or two conversations): its interval
    # is widened to the cluster jackknife's standard error within this range
    # (`analysis.bootstrap.jackknife_widened`).
    widen: tuple[float, float] | None = None

    def evaluate(self, records: Sequence[Any], weights: Weights) -> tuple[float, FloatArray]:
        """The point value (NaN where undefined) and the value under each row of `weights`,
        reading the records' values once."""
        return self.evaluate_values(self.values(records), weights)

    def evaluate_values(self, found: Found, weights: Weights) -> tuple[float, FloatArray]:
        """As `evaluate`, from values already read (by `values`, or from a `column`)."""
        values, rows = self._by_row(found, weights)
        if len(values) == 0:
            return float("nan"), np.full(weights.rows, np.nan)
        point = self.statistic(values, rows.unit())[0]
        # (`weighted`, under the same rows' weights: the point's per-cluster sums are shared)
        return float(point), self.statistic(values, rows)

    def weighted(self, found: Found, weights: Weights) -> FloatArray:
        """The value under each row of `weights` (weights of the records the values were read
        from), from values already read."""
        values, weights = self._by_row(found, weights)
        if len(values) == 0:
            return np.full(weights.rows, np.nan)
        return self.statistic(values, weights)

    def leave_one_out(self, found: Found, weights: Weights) -> FloatArray:
        """The value with each cluster of the items left out in turn (the cluster jackknife)."""
        values, weights = self._by_row(found, weights)
        if len(values) == 0:
            return np.full(0, np.nan)
        return self.statistic(values, weights.leave_one_out())

    def value(self, records: Sequence[Any]) -> float | None:
        """The point estimate, None where undefined; each view's conversation is its cluster,
        as in an analysis (one cluster for records that name none)."""
        point = self.evaluate(records, conversation_weights(records))[0]
        return None if np.isnan(point) else point

    @staticmethod
    def _by_row(found: Found, weights: Weights) -> tuple[FloatArray, Weights]:
        """The values, and the weights of their rows (rows of one record share its weight)."""
        values, owners = found if isinstance(found, tuple) else (found, None)
        if owners is not None:
            weights = Weights(weights.counts, weights.cluster[owners])
        return values, weights


def conversation_weights(records: Sequence[Any]) -> Weights:
    """Weights of 1 with each view's conversation as its cluster; one cluster for all where a
    record is not a view of a run record."""
    found = [getattr(getattr(r, "record", None), "conversation_id", None) for r in records]
    if None in found or not found:
        return Weights.ones(len(records))
    code: dict[str, int] = {}
    codes = np.array([code.setdefault(str(c), len(code)) for c in found], dtype=np.int64)
    return Weights(np.ones((1, len(code))), codes)


METRICS: Registry[Metric] = Registry("metric")


def register(task: str, *metrics: Metric) -> tuple[Metric, ...]:
    """Register a task's metrics as `task.name`; returns them for the task's declaration."""
    for metric in metrics:
        METRICS.register(f"{task}.{metric.name}")(metric)
    return metrics


# Statistics -----------------------------------------------------------------------------


def mean_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """The weighted mean of column 0 over the items where it is defined (not NaN)."""
    # made once per values array, so that its sums are too (the point's and the resamples')
    sums = weights.sum(weights.keep("mean", values, lambda: _defined(values[:, 0])))
    return safe_ratio(sums[:, 0], sums[:, 1])


def _defined(column: FloatArray) -> FloatArray:
    """(items, 2): each value where defined (else 0), and 1 where defined (else 0)."""
    defined = ~np.isnan(column)
    return np.stack([np.where(defined, column, 0.0), defined.astype(np.float64)], axis=1)


def ratio_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """Weighted sum of column 0 over weighted sum of column 1."""
    sums = weights.sum(values)
    return safe_ratio(sums[:, 0], sums[:, 1])


def micro_f1_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """2TP / (2TP + FP + FN), pooled over labels; `values` is [TP per label, FP per label,
    FN per label] (see `label_counts`)."""
    tp, fp, fn = (part.sum(axis=1) for part in np.split(weights.sum(values), 3, axis=1))
    return safe_ratio(2 * tp, 2 * tp + fp + fn)


def label_f1(sums: FloatArray) -> FloatArray:
    """F1 per label from summed counts (..., 3L), as `per_label` gives it."""
    tp, fp, fn = np.split(sums, 3, axis=-1)
    return safe_ratio(2 * tp, 2 * tp + fp + fn)


def per_label(sums: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """F1, precision, recall and support per label from summed counts (..., 3L)."""
    tp, fp, fn = np.split(sums, 3, axis=-1)
    return (
        label_f1(sums),
        safe_ratio(tp, tp + fp),
        safe_ratio(tp, tp + fn),
        tp + fn,
    )


# The fewest clusters (conversations) a label's gold must be in for its F1's ratio bias to be
# estimated and subtracted; with fewer the estimate overshoots (docs/report.md, macro-F1).
RATIO_BIAS_CLUSTERS = 6


def macro_f1_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """Macro-F1: the unweighted mean of per-label F1 over the labels of the items' gold.

    The label set is fixed by the items, not by a resample: every label some item's gold holds
    (scikit-learn's `f1_score(labels=...)`). A label only predicted is not one of them (naming
    it costs the true label's recall), and a resample averages over the same labels as the
    estimate (one that leaves a label with no item at all, in gold or prediction, has no F1
    for it and averages over the rest). Each label's F1 is a ratio of sums,
    2TP / (2TP + FP + FN), biased at few clusters; its second-order bias (`f1_ratio_bias`),
    estimated on the items, is subtracted from the estimate and from every resample alike (a
    bias re-estimated in each resample gave the same intervals in simulated studies, at twice
    the cost), where the label's gold is in `RATIO_BIAS_CLUSTERS` of the items' clusters or
    more.
    """
    labels = weights.keep("gold labels", values, lambda: _gold_labels(values))
    # the items' own bias, the same under any counts: estimated once
    bias = weights.keep("f1_ratio_bias", values, lambda: f1_ratio_bias(values, weights.unit()))
    f1 = label_f1(weights.sum(values)) - bias
    f1 = np.where(labels, np.clip(f1, 0.0, 1.0), np.nan)
    defined = ~np.isnan(f1)
    return safe_ratio(np.where(defined, f1, 0.0).sum(axis=1), defined.sum(axis=1).astype(float))


def _gold_labels(values: FloatArray) -> FloatArray:
    """Whether some item's gold holds each label (`values` as `label_counts` gives them)."""
    tp, _, fn = np.split(values.sum(axis=0), 3)
    found: FloatArray = (tp + fn) > 0
    return found


def f1_ratio_bias(values: FloatArray, weights: Weights) -> FloatArray:
    """The (rows, labels) estimated bias of each label's F1 under each row of weights.

    F1 = sum(t) / sum(d) over clusters, with t = 2TP and d = 2TP + FP + FN per cluster: a ratio
    estimator, whose bias to second order is (R S_d^2 - S_td) / (m dbar^2) over the m clusters
    where some item names a label (Cochran 1977, "Sampling techniques", section 6.8), which
    reduces to m (R sum(d^2) - sum(t d)) / ((m - 1) sum(d)^2). Only for the labels whose gold
    is in `RATIO_BIAS_CLUSTERS` clusters of the items or more; the others get 0.
    """
    table = weights.cluster_table(values)
    tp, fp, fn = np.split(table, 3, axis=1)
    corrected = np.flatnonzero(((tp + fn) > 0).sum(axis=0) >= RATIO_BIAS_CLUSTERS)
    bias = np.zeros((weights.rows, tp.shape[1]))
    if len(corrected) == 0:
        return bias
    top = 2.0 * tp[:, corrected]
    bottom = top + fp[:, corrected] + fn[:, corrected]
    held = table.any(axis=1, keepdims=True)  # clusters where an item names a label
    # one product for the clusters drawn and every label's cross-products
    per_cluster = np.concatenate([held, bottom * bottom, top * bottom], axis=1)
    drawn = weights.counts @ per_cluster
    clusters, squares, products = drawn[:, :1], *np.split(drawn[:, 1:], 2, axis=1)
    sum_tp, sum_fp, sum_fn = (part[:, corrected] for part in np.split(weights.sum(values), 3, 1))
    total = 2.0 * sum_tp + sum_fp + sum_fn
    spread = safe_ratio(2.0 * sum_tp, total) * squares - products
    found = safe_ratio(clusters * spread, np.maximum(clusters - 1.0, 0.0) * total * total)
    bias[:, corrected] = np.nan_to_num(found)
    return bias


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
    """Pearson's r on each weighted resample; NaN where either side is constant."""
    total = weights.sum(axis=1, keepdims=True)
    dx = x - safe_ratio((weights * x).sum(axis=1, keepdims=True), total)
    dy = y - safe_ratio((weights * y).sum(axis=1, keepdims=True), total)
    vx, vy = (weights * dx * dx).sum(axis=1), (weights * dy * dy).sum(axis=1)
    # ranks are of the order of `total`, so a constant side leaves only rounding noise
    tiny = 1e-10 * np.maximum(total[:, 0], 1.0) ** 3
    spread = np.where((vx > tiny) & (vy > tiny), np.sqrt(vx * vy), 0.0)
    return safe_ratio((weights * dx * dy).sum(axis=1), spread)


def distinct_pairs(values: FloatArray) -> tuple[FloatArray, IntArray]:
    """The distinct rows of an (items, 2) array in lexicographic order, and each item's row:
    `np.unique(values, axis=0, return_inverse=True)`, by two one-column sorts (sorting rows
    as records is several times slower)."""
    xs, x_code = np.unique(values[:, 0], return_inverse=True)
    ys, y_code = np.unique(values[:, 1], return_inverse=True)
    codes, group = np.unique(x_code * len(ys) + y_code, return_inverse=True)
    cells = np.stack([xs[codes // len(ys)], ys[codes % len(ys)]], axis=1)
    return cells, group.reshape(-1)


def spearman_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """Spearman's rho of columns 0 and 1 over the items where both are defined: Pearson's r of
    weighted average ranks (Spearman 1904). With unit weights it equals
    `scipy.stats.spearmanr`; fewer than three weighted pairs give NaN."""
    usable = ~np.isnan(values[:, 0]) & ~np.isnan(values[:, 1])
    if not usable.any():
        return np.full(weights.rows, np.nan)
    # Items with the same (x, y) are one cell whose weight is their total: a table of distinct
    # pairs is all the ranks need, and it is far smaller than the items.
    cells, group = distinct_pairs(values[usable])
    subset = Weights(weights.counts, weights.cluster[usable])
    table = subset.grouped(group, len(cells))
    x, y = cells[:, 0].copy(), cells[:, 1].copy()
    rho = weighted_pearson(weighted_midranks(x, table), weighted_midranks(y, table), table)
    return np.where(table.sum(axis=1) >= 3, rho, np.nan)


# Value builders -------------------------------------------------------------------------


def column(numbers: Sequence[float | None]) -> FloatArray:
    """One value per item (None: NaN), as an (items, 1) array."""
    return np.array(numbers, dtype=np.float64).reshape(-1, 1)  # numpy reads None as NaN


def pairs(numbers: Sequence[tuple[float | None, float | None]]) -> FloatArray:
    """(predicted, gold) per item (None: NaN), as an (items, 2) array."""
    return np.array(numbers, dtype=np.float64).reshape(-1, 2)  # numpy reads None as NaN


_PREDICTION, _STATUS = attrgetter("prediction"), attrgetter("status")


def distinct_answers(views: Sequence[Any]) -> tuple[list[Any], IntArray]:
    """A view of each distinct answer (prediction and status) among the views, in order of
    first appearance, and each view's answer among them. Records share a few: each distinct
    prediction is one object among an analysis's views (`analysis.cells`); views whose
    predictions are distinct objects are distinct answers, read one by one as before."""
    keys = list(zip(map(id, map(_PREDICTION, views)), map(_STATUS, views), strict=True))
    one = dict(zip(keys, views, strict=True))  # a view of each distinct answer
    index = {key: i for i, key in enumerate(one)}
    codes = np.fromiter(map(index.__getitem__, keys), dtype=np.int64, count=len(keys))
    return list(one.values()), codes


def per_answer(of: Callable[[Any], T], views: Sequence[Any]) -> list[T]:
    """`of` of each view, for an `of` that reads nothing of a view but its answer (its
    prediction and status): called once per distinct answer (`distinct_answers`)."""
    answers, answer = distinct_answers(views)
    return list(map(list(map(of, answers)).__getitem__, answer.tolist()))


def expanded(
    records: Sequence[Any],
    rows_of: Callable[[Any], Sequence[float]],
    answer_only: bool = False,
) -> tuple[FloatArray, IntArray]:
    """Several values per record (one per order of a pair, say), with each row's record;
    `answer_only`: `rows_of` reads only each record's answer (`per_answer`)."""
    found = per_answer(rows_of, records) if answer_only else list(map(rows_of, records))
    sizes = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
    owners = np.repeat(np.arange(len(found), dtype=np.int64), sizes)
    return column(list(chain.from_iterable(found))), owners


LabelSets = Sequence[tuple[frozenset[str], frozenset[str]]]


# Items share a few (named, given) labels: each pair of sets is made once, and the metrics
# counting them hash the same sets again and again.
@cache
def label_pair(
    named: tuple[str, ...], given: tuple[str, ...] | frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """The labels an answer named and those the gold gives, as a label metric reads them."""
    return frozenset(named), frozenset(given)


def label_counts(sets: LabelSets) -> tuple[list[str], FloatArray]:
    """The labels seen, and per item [TP per label, FP per label, FN per label] (items, 3L)
    from (predicted, gold) label sets.

    Items share a few distinct (predicted, gold) pairs: each distinct pair's row is made once.
    """
    distinct = list(dict.fromkeys(sets))  # in order of first appearance
    code = {pair: row for row, pair in enumerate(distinct)}
    rows = np.fromiter(map(code.__getitem__, sets), dtype=np.int64, count=len(sets))
    labels = sorted(set().union(*(predicted | gold for predicted, gold in distinct)))
    index = {label: i for i, label in enumerate(labels)}
    width = max(len(labels), 1)
    table = np.zeros((len(distinct), 3 * width))
    for row, (predicted, gold) in enumerate(distinct):
        for label in predicted & gold:
            table[row, index[label]] = 1
        for label in predicted - gold:
            table[row, width + index[label]] = 1
        for label in gold - predicted:
            table[row, 2 * width + index[label]] = 1
    return labels, table[rows]


def column_metric(
    name: str, description: str, read: Column | None = None, higher_is_better: bool = True
) -> Metric:
    """The mean of a number every record holds, where it is defined: by default the value of
    this name (`scores[name]`), the record's score for `score`."""
    read = read or Column(None if name == "score" else name)
    return Metric(
        name,
        description,
        lambda records: column(list(map(read.of, records))),
        mean_statistic,
        higher_is_better,
        read,
    )


def mean_metric(
    name: str, description: str, of: Callable[[Any], float | None], higher_is_better: bool = True
) -> Metric:
    """The mean of a per-item number over the items where it is defined."""
    return Metric(
        name,
        description,
        lambda records: column(list(map(of, records))),
        mean_statistic,
        higher_is_better,
    )


def f1_metric(
    name: str,
    description: str,
    sets: Callable[[Any], tuple[frozenset[str], frozenset[str]]],
    statistic: Statistic,
) -> Metric:
    """Micro or macro F1 from each item's (predicted, gold) label sets, read within each
    corpus part and averaged (`within_parts`); macro-F1's interval is widened to the
    jackknife's where that is wider (a few conversations decide a rare label)."""
    widen = (0.0, 1.0) if statistic is macro_f1_statistic else None
    return Metric(name, description, label_values(sets), within_parts(statistic), widen=widen)


def pooled_macro_f1(sets: Callable[[Any], tuple[frozenset[str], frozenset[str]]]) -> Metric:
    """`pooled_macro_f1`: the macro-F1 over the items of every corpus part pooled
    (`across_parts`): a view beside the headline, never the headline."""
    return Metric(
        "pooled_macro_f1",
        "macro-F1 with the corpus parts pooled (one label set over every part): a view, "
        "never the headline, on which naming each corpus's most common label scores; "
        "defined where the items come from several parts",
        label_values(sets),
        across_parts(macro_f1_statistic),
        widen=(0.0, 1.0),
    )


@cache
def label_values(sets: Callable[[Any], tuple[frozenset[str], frozenset[str]]]) -> Values:
    """Each record's corpus part (a code) then its label counts: one function per `sets`, so
    the F1 metrics of the same label sets share one reading."""

    def read(records: Sequence[Any]) -> FloatArray:
        counts = label_counts(list(map(sets, records)))[1]
        return np.hstack([part_codes(records), counts])

    return read


# Corpus parts -----------------------------------------------------------------------------


_PART = attrgetter("gold.part")


def part_codes(records: Sequence[Any]) -> FloatArray:
    """Each record's corpus part (its gold's `part`, None where it names none) as a code,
    in order of first appearance, as an (items, 1) array."""
    try:  # one C-level map where every record has a gold with a part field
        parts = list(map(_PART, records))
    except AttributeError:
        parts = [getattr(getattr(r, "gold", None), "part", None) for r in records]
    code = {part: i for i, part in enumerate(dict.fromkeys(parts))}
    found = np.fromiter(map(code.__getitem__, parts), dtype=np.float64, count=len(parts))
    return found.reshape(-1, 1)


def within_parts(statistic: Statistic) -> Statistic:
    """The statistic read within each corpus part and averaged over the parts, each weighted
    by its items' weight (in a resample, its items as drawn); `values` holds each item's part
    code in column 0, then the statistic's own columns. With one part it is the statistic
    itself; for a mean, weighting by items gives the pooled mean. A part where it is
    undefined, or that a resample did not draw, is left out of the average.

    The parts of pooled data differ by design (each corpus has its own labels and their
    shares), so a statistic read across them rewards knowing which corpus an item comes from
    (naming each corpus's most common label earns F1 on several labels at once); read within
    each part, a rule that knows only the part scores what a constant scores there.
    """

    def within(values: FloatArray, weights: Weights) -> FloatArray:
        parts = weights.split(values).groups  # shared by the statistics of these parts
        if len(parts) == 1:
            return statistic(parts[0][0], weights)
        found = [statistic(rest, subset) for rest, subset, _ in parts]
        sizes = [size for _, _, size in parts]
        return weighted_average(np.stack(found, axis=1), np.stack(sizes, axis=1))

    return within


def across_parts(statistic: Statistic) -> Statistic:
    """The statistic over the items of every corpus part pooled (`values` as `within_parts`
    reads them); NaN where they come from one part, where it is the same as within."""

    def pooled(values: FloatArray, weights: Weights) -> FloatArray:
        split = weights.split(values)  # its sums are the parts' added, where exact
        if len(split.groups) < 2:
            return np.full(weights.rows, np.nan)
        return statistic(split.rest, weights)

    return pooled


def weighted_average(values: FloatArray, weights: FloatArray) -> FloatArray:
    """Per row, the weighted mean of the defined values (NaN where none is)."""
    usable = ~np.isnan(values) & (weights > 0)
    total = np.where(usable, weights, 0.0).sum(axis=1)
    summed = np.where(usable, np.nan_to_num(values) * weights, 0.0).sum(axis=1)
    return safe_ratio(summed, total)


def spearman_metric(
    name: str, description: str, of: Callable[[Any], tuple[float | None, float | None]]
) -> Metric:
    """Spearman's rho between predicted and gold numbers, over items with both."""
    return Metric(
        name, description, lambda records: pairs([of(r) for r in records]), spearman_statistic
    )
