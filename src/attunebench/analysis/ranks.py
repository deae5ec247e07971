"""Do tasks rank models alike? Kendall's tau-b and Spearman's rho for every pair of tasks.

For each pair, the statistic is computed on the models' headline scores (the models scored on
both tasks), with

- a cluster-bootstrap percentile interval: the same resampled conversations feed both tasks'
  scores in each resample, so the interval carries the scores' noise honestly;
- a permutation p-value (`scipy.stats.permutation_test`, pairings) for "no association";
- a verdict line, from the Kendall p-value Holm-adjusted over all pairs.

Kendall 1945, "The treatment of ties in ranking problems", Biometrika 33(3) (tau-b);
Spearman 1904; permutation tests: Good 2005, "Permutation, Parametric and Bootstrap Tests".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

import numpy as np
from scipy import stats

from attunebench.analysis.bootstrap import percentile_interval, safe_ratio
from attunebench.analysis.frame import FloatArray
from attunebench.analysis.multiplicity import holm
from attunebench.analysis.schema import Correlation, RankCorrelation, TaskPair
from attunebench.analysis.scores import MetricScores

ALPHA = 0.05
DEFAULT_PERMUTATIONS = 9999
Statistic = Callable[[FloatArray, FloatArray], FloatArray]


def kendall_tau_b(x: FloatArray, y: FloatArray) -> FloatArray:
    """Tau-b along the last axis: sum(sign dx * sign dy) / sqrt(untied-x pairs * untied-y pairs)."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    concordance = (sx * sy).sum(axis=-1)
    return safe_ratio(concordance, np.sqrt((sx * sx).sum(axis=-1) * (sy * sy).sum(axis=-1)))


def spearman_rho(x: FloatArray, y: FloatArray) -> FloatArray:
    """Spearman's rho along the last axis: Pearson's r of average ranks."""
    rx = stats.rankdata(x, axis=-1)
    ry = stats.rankdata(y, axis=-1)
    dx = rx - rx.mean(axis=-1, keepdims=True)
    dy = ry - ry.mean(axis=-1, keepdims=True)
    spread = np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum(axis=-1))
    return safe_ratio((dx * dy).sum(axis=-1), spread)


def _null(reason: str) -> Correlation:
    return Correlation(value=None, reason=reason)


def correlate(
    statistic: Statistic,
    x: FloatArray,
    y: FloatArray,
    x_samples: FloatArray,
    y_samples: FloatArray,
    permutations: int,
    rng: np.random.Generator,
    confidence: float,
) -> Correlation:
    """One correlation with its bootstrap interval and permutation p-value."""
    value = float(statistic(x, y))
    if np.isnan(value):
        return _null("every model scores the same on one of the tasks")
    low, high = percentile_interval(statistic(x_samples, y_samples)[:, None], confidence)
    test = stats.permutation_test(
        (x, y),
        lambda a, b, axis: statistic(np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)),
        permutation_type="pairings",
        vectorized=True,
        n_resamples=permutations,
        rng=rng,
    )
    return Correlation(
        value=value, ci_low=_clean(low[0]), ci_high=_clean(high[0]), p_value=float(test.pvalue)
    )


def _clean(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def verdict(tau: Correlation, p_holm: float | None) -> str:
    if tau.value is None or p_holm is None:
        return f"not computed: {tau.reason}"
    interval = (
        f"tau-b {tau.value:.2f} [{_fmt(tau.ci_low)}, {_fmt(tau.ci_high)}], Holm p = {p_holm:.3g}"
    )
    if p_holm < ALPHA:
        return f"{'rankings agree' if tau.value > 0 else 'rankings are opposed'}: {interval}"
    return f"no evidence of agreement: {interval}"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def rank_correlation(
    headlines: Mapping[str, MetricScores],
    model_names: Sequence[str],
    *,
    permutations: int,
    rng: np.random.Generator,
    confidence: float,
) -> RankCorrelation:
    """Every pair of tasks, on the models scored on both (at least three are needed)."""
    tasks = sorted(headlines)
    cells: dict[tuple[str, str], tuple[list[str], Correlation, Correlation]] = {}
    for a, b in combinations(tasks, 2):
        sa, sb = headlines[a], headlines[b]
        both = np.flatnonzero(~np.isnan(sa.point) & ~np.isnan(sb.point))
        names = [model_names[int(m)] for m in both]
        if len(both) < 3:
            why = f"fewer than 3 models scored on both tasks ({len(both)})"
            cells[a, b] = (names, _null(why), _null(why))
            continue
        args = (sa.point[both], sb.point[both], sa.samples[:, both], sb.samples[:, both])
        cells[a, b] = (
            names,
            correlate(kendall_tau_b, *args, permutations, rng, confidence),
            correlate(spearman_rho, *args, permutations, rng, confidence),
        )
    adjusted = holm([cells[key][1].p_value for key in cells])
    pairs = [
        TaskPair(
            task_a=a,
            task_b=b,
            models=names,
            kendall_tau_b=tau,
            spearman=rho,
            p_holm=p,
            verdict=verdict(tau, p),
        )
        for ((a, b), (names, tau, rho)), p in zip(cells.items(), adjusted, strict=True)
    ]
    used = sorted({name for pair in pairs for name in pair.models})
    reason: str | None = None
    if len(tasks) < 2:
        reason = "fewer than 2 tasks"
    elif all(pair.kendall_tau_b.value is None for pair in pairs):
        reason = pairs[0].kendall_tau_b.reason
    return RankCorrelation(
        tasks=tasks,
        models=used,
        permutations=permutations,
        reason=reason,
        kendall_tau_b=_matrix(tasks, {k: v[1] for k, v in cells.items()}),
        spearman=_matrix(tasks, {k: v[2] for k, v in cells.items()}),
        pairs=pairs,
    )


def _matrix(
    tasks: list[str], cells: Mapping[tuple[str, str], Correlation]
) -> list[list[Correlation]]:
    def cell(a: str, b: str) -> Correlation:
        if a == b:
            return Correlation(value=1.0, ci_low=1.0, ci_high=1.0)
        return cells[(a, b)] if (a, b) in cells else cells[(b, a)]

    return [[cell(a, b) for b in tasks] for a in tasks]
