"""Calibration of choice answers: Brier (Brier 1950), ECE with ten equal-width bins (Naeini et
al. 2015) and, for two options, AUROC (Hanley & McNeil 1982), over the rows each task's
`Scoring.calibration_rows` gives; sums over rows, so they take the bootstrap weights."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import compress
from operator import attrgetter
from typing import Any

import numpy as np

from attunebench.stats import FloatArray, IntArray, Weights, safe_ratio
from attunebench.tasks.helpers.metrics import (
    Found,
    Metric,
    Values,
    distinct_pairs,
    mean_statistic,
    weighted_midranks,
)

BINS = 10
# The readings `calibration_metrics` made (a task's metrics are made once, with its class).
_READINGS: set[Callable[..., Any]] = set()
Row = tuple[Mapping[str, float], str]  # the options' probabilities, and the gold option
RowsOf = Callable[[Any], Sequence[Row]]
_DISTRIBUTIONS = attrgetter("record.distributions")


def choice_rows(views: Sequence[Any], rows_of: RowsOf) -> tuple[list[Row], IntArray]:
    """The rows of the views' choice answers, and the index of the view each came from."""
    rows: list[Row] = []
    owners: list[int] = []
    # a generated answer has no probabilities, hence no rows (most records): they are passed
    # over without a Python statement each
    for i in compress(range(len(views)), map(_DISTRIBUTIONS, views)):
        found = rows_of(views[i])
        rows.extend(found)
        owners.extend([i] * len(found))
    return rows, np.array(owners, dtype=np.int64)


def brier_values(rows: Sequence[Row]) -> FloatArray:
    return np.array(
        [[sum((p - float(k == gold)) ** 2 for k, p in probs.items())] for probs, gold in rows],
        dtype=np.float64,
    ).reshape(-1, 1)


def ece_values(rows: Sequence[Row]) -> FloatArray:
    """Per row: [correct per bin, confidence per bin, count per bin] (rows, 3 x BINS)."""
    out = np.zeros((len(rows), 3 * BINS))
    for i, (probs, gold) in enumerate(rows):
        top = max(probs, key=lambda k: probs[k])
        confidence = probs[top]
        b = min(int(confidence * BINS), BINS - 1)
        out[i, b] = float(top == gold)
        out[i, BINS + b] = confidence
        out[i, 2 * BINS + b] = 1.0
    return out


def ece_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    sums = weights.sum(values)
    correct, confidence, count = np.split(sums, 3, axis=1)
    return safe_ratio(np.abs(correct - confidence).sum(axis=1), count.sum(axis=1))


def bins(rows: Sequence[Row]) -> list[tuple[float, float, int]]:
    """The reliability diagram: per non-empty bin, (mean confidence, accuracy, rows)."""
    return _diagram(ece_values(rows))


def reading_bins(found: Found) -> list[tuple[float, float, int]]:
    """`bins` of the rows a calibration metric's reading holds (`calibration_metrics`' values:
    Brier's column, then ECE's 3 x BINS): the diagram without reading the answers again."""
    values = found[0] if isinstance(found, tuple) else found
    return _diagram(values[:, 1 : 1 + 3 * BINS])


def is_reading(values: Values) -> bool:
    """Whether `values` is a reading made by `calibration_metrics` (`reading_bins` reads it)."""
    return values in _READINGS


def _diagram(ece: FloatArray) -> list[tuple[float, float, int]]:
    sums = ece.sum(axis=0)
    correct, confidence, count = np.split(sums, 3)
    return [
        (float(confidence[b] / count[b]), float(correct[b] / count[b]), int(count[b]))
        for b in range(BINS)
        if count[b] > 0
    ]


def auroc_values(rows: Sequence[Row], positive: str) -> FloatArray:
    """Per row: (probability of `positive`, 1 if the gold is it else 0)."""
    return np.array(
        [[probs.get(positive, 0.0), float(gold == positive)] for probs, gold in rows],
        dtype=np.float64,
    ).reshape(-1, 2)


def auroc_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """Weighted Mann-Whitney AUC of column 0 against the labels in column 1."""
    cells, group = distinct_pairs(values)
    table = weights.grouped(group, len(cells))  # (B, cells)
    ranks = weighted_midranks(cells[:, 0].copy(), table)
    positive = cells[:, 1] == 1.0
    w_pos, w_neg = table[:, positive].sum(axis=1), table[:, ~positive].sum(axis=1)
    rank_sum = (table[:, positive] * ranks[:, positive]).sum(axis=1)
    return safe_ratio(rank_sum - w_pos * (w_pos + 1) / 2, w_pos * w_neg)


def calibration_metrics(rows_of: RowsOf, positive: str | None = None) -> tuple[Metric, ...]:
    """Brier and ECE (and AUROC of `positive`) over a task's rows, sharing one reading of them
    ([Brier | ECE's 3 x BINS | AUROC's 2] per row)."""
    ece_end = 1 + 3 * BINS

    def values(views: Sequence[Any]) -> tuple[FloatArray, IntArray]:
        rows, owners = choice_rows(views, rows_of)
        parts = [brier_values(rows), ece_values(rows)]
        if positive is not None:
            parts.append(auroc_values(rows, positive))
        return np.concatenate(parts, axis=1), owners

    _READINGS.add(values)

    def brier(found: FloatArray, weights: Weights) -> FloatArray:
        return mean_statistic(found[:, :1], weights)

    def ece(found: FloatArray, weights: Weights) -> FloatArray:
        return ece_statistic(found[:, 1:ece_end], weights)

    def auroc(found: FloatArray, weights: Weights) -> FloatArray:
        return auroc_statistic(found[:, ece_end:], weights)

    errors = {
        "brier": ("multiclass Brier score of the choice probabilities", brier),
        "ece": ("expected calibration error of the most probable option (10 bins)", ece),
    }
    found = [
        Metric(name, description, values, statistic, higher_is_better=False)
        for name, (description, statistic) in errors.items()
    ]
    if positive is not None:
        found.append(Metric("auroc", f"area under the ROC curve of P({positive})", values, auroc))
    return tuple(found)
