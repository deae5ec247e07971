"""Statistics that are functions of summed per-row counts as `Estimate`s: the value and each
resample's from `ClusterBootstrap.statistic` (one definition gives both, the same idea as
`tasks.helpers.metrics`), with the interval, or the reason there is none."""

from __future__ import annotations

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Finish, Minimum, ratio
from attunebench.analysis.frame import FloatArray, IntArray
from attunebench.analysis.schema import Estimate


def estimate(
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
    values: FloatArray,
    conversations: IntArray,
    finish: Finish,
    undefined: str,
) -> Estimate:
    """`finish` of the column sums of `values` (rows x k), with its percentile interval.

    Null with `undefined` when there are no rows or the value is undefined; no interval, with
    the reason, when the rows fall in too few clusters."""
    if len(values) == 0:
        return Estimate(value=None, reason=undefined)
    with np.errstate(divide="ignore", invalid="ignore"):
        points, drawn = bootstrap.statistic(values, conversations, finish)
    point = float(points[0])
    if not np.isfinite(point):
        return Estimate(value=None, reason=undefined)
    too_few = minimum.of(conversations, " with these verdicts")
    if too_few is not None:
        return Estimate(value=point, reason=too_few)
    drawn = np.where(np.isfinite(drawn[:, :1]), drawn[:, :1], np.nan)
    low, high = bootstrap.interval(drawn)
    if np.isnan(low[0]):
        return Estimate(value=point, reason="undefined in every resample")
    return Estimate(value=point, ci_low=float(low[0]), ci_high=float(high[0]))


def mean(
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
    values: FloatArray,
    conversations: IntArray,
    undefined: str,
) -> Estimate:
    """The mean of `values` (one per row) with its cluster-bootstrap interval."""
    table = np.stack([values, np.ones_like(values)], axis=1)
    return estimate(bootstrap, minimum, table, conversations, ratio, undefined)


def slope(sums: FloatArray) -> FloatArray:
    """The least-squares slope of y on x from the sums of (1, x, y, x*x, x*y)."""
    n, x, y, xx, xy = (sums[..., i] for i in range(5))
    spread = n * xx - x * x
    out: FloatArray = np.where(
        spread > 1e-12, (n * xy - x * y) / np.where(spread > 1e-12, spread, 1.0), np.nan
    )
    return out


def slope_columns(x: FloatArray, y: FloatArray) -> FloatArray:
    return np.stack([np.ones_like(x), x, y, x * x, x * y], axis=1)
