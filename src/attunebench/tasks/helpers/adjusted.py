"""Headline statistics no trivial strategy can win: correlations with the person's answer once
what a constant or the item's position predicts is taken out.

`adjusted_r_statistic` residualises prediction and gold on the item's position cell and
correlates the residuals (a partial correlation; Cohen, Cohen, West and Aiken 2003, ch. 3): a
prediction constant within every cell scores 0, as does an unanswered item. A cell is read
within the item's corpus part, since the parts of a suite differ by design; `across_parts` is
the view that pools them. The values are one row per item, its columns named by `CELL`, ..., `PART`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np

from attunebench.stats import FloatArray, IntArray, Weights, group_sums, safe_ratio
from attunebench.tasks.helpers.metrics import spearman_statistic, weighted_average

CELL, CONVERSATION, ANSWERED, PREDICTED, GOLD, ERROR, POOLED_CELL, PART = range(8)
WIDTH = PART + 1  # the columns of one row
TINY = 1e-12


def codes(keys: Sequence[Hashable]) -> IntArray:
    """Each key's code, in order of first appearance."""
    seen: dict[Hashable, int] = {}
    return np.array([seen.setdefault(k, len(seen)) for k in keys], dtype=np.int64)


def adjusted_rows(
    cells: Sequence[Hashable],
    conversations: Sequence[str],
    predicted: Sequence[float | None],
    gold: Sequence[float],
    worst_error: Sequence[float],
    parts: Sequence[str | None] | None = None,
    asked: Sequence[Hashable] | None = None,
) -> FloatArray:
    """One row per item; an item's cell within its part is (part, `asked`, position cell),
    where `asked` is what else it holds (the fields an outcome item asks)."""
    answered = np.array([p is not None for p in predicted], dtype=np.float64)
    guess = np.array([0.0 if p is None else p for p in predicted], dtype=np.float64)
    truth = np.array(gold, dtype=np.float64)
    error = np.where(answered > 0, (guess - truth) ** 2, np.asarray(worst_error) ** 2)
    parts = parts if parts is not None else [None] * len(cells)
    extra = asked if asked is not None else [None] * len(cells)
    within = codes(list(zip(parts, extra, cells, strict=True)))
    columns = [within, codes(conversations), answered, guess, truth, error]
    return np.stack([*columns, codes(cells), codes(parts)], axis=1).astype(np.float64)


Statistic = Callable[[FloatArray, Weights], FloatArray]


def across_parts(statistic: Statistic) -> Statistic:
    """The statistic with each item's cell across parts in place of its cell within its part:
    the view that pools the corpus parts (see the module docstring). NaN where the items come
    from one part, where it is the headline itself."""

    def pooled(values: FloatArray, weights: Weights) -> FloatArray:
        if np.unique(values[:, PART]).size < 2:
            return np.full(weights.rows, np.nan)
        swapped = values.copy()
        for k in range(0, values.shape[1], WIDTH):
            swapped[:, k + CELL] = values[:, k + POOLED_CELL]
        return statistic(swapped, weights)

    return pooled


def _cell_sums(values: FloatArray, weights: Weights) -> tuple[FloatArray, ...]:
    """Per resample and cell (B, cells): total weight, and the weighted sums of y, y^2, and,
    over answered items, of 1, x, x^2, xy and y."""
    cell = values[:, CELL].astype(np.int64)
    n = int(cell.max()) + 1
    a, x, y = values[:, ANSWERED], values[:, PREDICTED] * values[:, ANSWERED], values[:, GOLD]
    table = np.stack([np.ones_like(y), y, y * y, a, x, x * x, x * y, a * y], axis=1)
    clusters = weights.counts.shape[1]
    sums = group_sums(weights.cluster * n + cell, table, clusters * n)
    out = (weights.counts @ sums.reshape(clusters, n * 8)).reshape(-1, n, 8)
    return tuple(out[:, :, k] for k in range(8))


def _centred(sum_xx: FloatArray, sum_x: FloatArray, weight: FloatArray) -> FloatArray:
    """Sum over cells of the within-cell sum of squares (or products) about the cell mean."""
    found: FloatArray = np.where(weight > 0, sum_xx - sum_x * safe_ratio(sum_x, weight), 0.0)
    total: FloatArray = found.sum(axis=1)
    return total


def informative_r(cov: FloatArray, var_x: FloatArray, var_y: FloatArray) -> FloatArray:
    """cov / sqrt(var_x var_y); 0 where the prediction does not vary (it says nothing), NaN
    where the gold does not."""
    scale = np.maximum(np.abs(var_x) + np.abs(var_y), 1.0)
    flat_x, flat_y = var_x <= TINY * scale, var_y <= TINY * scale
    r = safe_ratio(cov, np.sqrt(np.where(flat_x | flat_y, 1.0, var_x * var_y)))
    return np.where(flat_y, np.nan, np.where(flat_x, 0.0, r))


def adjusted_r_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """The position-adjusted correlation (see the module docstring)."""
    w, sy, syy, wa, sx, sxx, sxy, sya = _cell_sums(values, weights)
    var_y = _centred(syy, sy, w)
    var_x = _centred(sxx, sx, wa)
    cov = np.where(wa > 0, sxy - sx * safe_ratio(sya, wa), 0.0).sum(axis=1)
    return informative_r(cov, var_x, var_y)


def position_skill_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """1 - the squared error over the position reference's (the gold's cell means)."""
    w, sy, syy = _cell_sums(values, weights)[:3]
    error = weights.sum(values[:, ERROR : ERROR + 1])[:, 0]
    reference = _centred(syy, sy, w)
    return np.where(reference > TINY, 1.0 - safe_ratio(error, reference), np.nan)


def _residuals(values: FloatArray, weights: Weights) -> tuple[FloatArray, FloatArray]:
    """Per resample (B, items): prediction and gold less their cell's weighted mean (answered
    items' mean for the prediction; 0 for an unanswered item)."""
    cell = values[:, CELL].astype(np.int64)
    w, sy, _, wa, sx = _cell_sums(values, weights)[:5]
    answered = values[:, ANSWERED]
    rx = answered * (values[:, PREDICTED] - safe_ratio(sx, wa)[:, cell])
    ry = values[:, GOLD] - safe_ratio(sy, w)[:, cell]
    return np.nan_to_num(rx), np.nan_to_num(ry)


def _pearson(x: FloatArray, y: FloatArray, weight: FloatArray) -> FloatArray:
    total = weight.sum(axis=1, keepdims=True)
    dx = x - safe_ratio((weight * x).sum(axis=1, keepdims=True), total)
    dy = y - safe_ratio((weight * y).sum(axis=1, keepdims=True), total)
    cov, vx, vy = ((weight * a * b).sum(axis=1) for a, b in ((dx, dy), (dx, dx), (dy, dy)))
    return informative_r(cov, vx, vy)


def _by_conversation(values: FloatArray, weights: Weights) -> tuple[FloatArray, ...]:
    """Residuals, their conversation means per item, and per-item weights (B, items)."""
    rx, ry = _residuals(values, weights)
    conversation = values[:, CONVERSATION].astype(np.int64)
    size = np.bincount(conversation).astype(np.float64)

    def means(r: FloatArray) -> FloatArray:
        return (group_sums(conversation, r.T.copy(), len(size)) / size[:, None]).T[:, conversation]

    return rx, ry, means(rx), means(ry), weights.counts[:, weights.cluster], size[conversation]


def between_r_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """Correlation of the conversations' mean residuals, each conversation weighted once."""
    _, _, mx, my, weight, size = _by_conversation(values, weights)
    return _pearson(mx, my, weight / size)


def within_r_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """Correlation of the residuals less their conversation's mean residual."""
    rx, ry, mx, my, weight, _ = _by_conversation(values, weights)
    return _pearson(rx - mx, ry - my, weight)


def mean_rho_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """Mean Spearman's rho over fields; `values` holds (predicted, gold) column pairs, NaN
    where an item lacks the field. A field whose prediction is one value throughout scores 0
    wherever its rho would be defined."""
    found = []
    for k in range(0, values.shape[1], 2):
        pair = values[:, k : k + 2]
        rho = spearman_statistic(pair, weights)
        usable = ~np.isnan(pair).any(axis=1)
        if np.unique(pair[usable, 0]).size == 1 and np.unique(pair[usable, 1]).size > 1:
            rho = np.zeros_like(rho)
        found.append(rho)
    stacked = np.stack(found, axis=1)
    return weighted_average(stacked, np.ones_like(stacked))


def mean_adjusted_r_statistic(values: FloatArray, weights: Weights) -> FloatArray:
    """The mean over fields of `adjusted_r_statistic`; `values` holds one block of `WIDTH`
    columns per field, its gold NaN at items without the field."""
    found = []
    for k in range(0, values.shape[1], WIDTH):
        block = values[:, k : k + WIDTH]
        rows = np.flatnonzero(~np.isnan(block[:, GOLD]))
        if len(rows) == 0:
            continue
        subset = Weights(weights.counts, weights.cluster[rows])
        found.append(adjusted_r_statistic(block[rows], subset))
    if not found:
        return np.full(weights.rows, np.nan)
    stacked = np.stack(found, axis=1)
    return weighted_average(stacked, np.ones_like(stacked))
