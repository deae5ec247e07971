"""Do tasks rank models alike? Kendall's tau-b and Spearman's rho for every pair of tasks.

Only the models under test are ranked: adding yardsticks manufactures agreement (every task puts
a random baseline last). Per pair: both correlations with a cluster-bootstrap interval and a
Holm-adjusted permutation p-value, the ceiling sqrt(rel_a x rel_b) from the split-half
reliabilities, the disattenuated rho and a verdict (`verdict`); docs/report.md ("Do tasks rank
models alike?") gives the rules and their planted checks. Every interval contains its estimate
(`bootstrap.containing`): percentile intervals of correlations near 1 end below them.

Kendall 1945, Biometrika 33(3) (tau-b); Spearman 1904; Good 2005 (permutation tests).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from attunebench.analysis.agreement.reliability import SplitHalf, pearson_r, spearman_rho
from attunebench.analysis.bootstrap import (
    containing,
    interval_with_infinity,
    pair_reason,
    percentile_interval,
)
from attunebench.analysis.frame import FloatArray
from attunebench.analysis.multiplicity import holm
from attunebench.analysis.schema import (
    Correlation,
    Estimate,
    RankCorrelation,
    Reliability,
    TaskPair,
    Verdict,
)
from attunebench.analysis.scores import MetricScores
from attunebench.stats import none_if_nan, safe_ratio

DEFAULT_PERMUTATIONS = 9999
MIN_DISTINCT_CONVERSATIONS = 20  # fewer: never "distinct" (see `verdict`)
Statistic = Callable[[FloatArray, FloatArray], FloatArray]


def kendall_tau_b(x: npt.NDArray[Any], y: npt.NDArray[Any]) -> FloatArray:
    """Tau-b along the last axis: sum(sign dx * sign dy) / sqrt(untied-x pairs * untied-y pairs)."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx, sy = np.sign(x[..., i] - x[..., j]), np.sign(y[..., i] - y[..., j])
    concordance = (sx * sy).sum(axis=-1)
    return safe_ratio(concordance, np.sqrt((sx * sx).sum(axis=-1) * (sy * sy).sum(axis=-1)))


def _kendall_of_ranks(x: FloatArray, y: FloatArray) -> FloatArray:
    """Tau-b of average ranks (whole or halves), taken as the whole numbers twice them: the same
    signs, so the same exact sums, as from the values, at a quarter of the memory a permutation
    test's thousands of rows read."""
    return kendall_tau_b((2 * x).astype(np.int16), (2 * y).astype(np.int16))


# A statistic of ranks, and what it computes from ranks already taken: the ranks of a permuted
# sample are its ranks permuted, so a permutation test ranks once rather than per permutation.
OF_RANKS: dict[Statistic, Statistic] = {
    spearman_rho: pearson_r,
    kendall_tau_b: _kendall_of_ranks,
}


def rho_interval(
    statistic: Statistic,
    x: FloatArray,
    y: FloatArray,
    x_samples: FloatArray,
    y_samples: FloatArray,
    confidence: float,
    clusters: int | None = None,
    drawn: FloatArray | None = None,
) -> Correlation:
    """One correlation with its bootstrap interval (expanded for `clusters` where given);
    `drawn`: the statistic of the samples, where the caller has it already."""
    value = float(statistic(x, y))
    if np.isnan(value):
        return Correlation(reason="every model scores the same on one of the tasks")
    if drawn is None:
        drawn = statistic(x_samples, y_samples)
    low, high = percentile_interval(drawn[:, None], confidence, clusters)
    low[0], high[0] = containing(value, low[0], high[0])
    return Correlation.of(value, low[0], high[0])


def correlate(
    statistic: Statistic,
    x: FloatArray,
    y: FloatArray,
    x_samples: FloatArray,
    y_samples: FloatArray,
    permutations: int,
    rng: np.random.Generator,
    confidence: float,
    clusters: int | None = None,
    drawn: FloatArray | None = None,
) -> Correlation:
    """One correlation with its bootstrap interval and permutation p-value."""
    found = rho_interval(statistic, x, y, x_samples, y_samples, confidence, clusters, drawn)
    if found.value is None:
        return found
    tested, data = statistic, (x, y)
    if statistic in OF_RANKS:
        tested, data = OF_RANKS[statistic], (stats.rankdata(x), stats.rankdata(y))
    test = stats.permutation_test(
        data,
        lambda a, b, axis: tested(np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)),
        permutation_type="pairings",
        vectorized=True,
        n_resamples=permutations,
        rng=rng,
    )
    return found.model_copy(update={"p_value": float(test.pvalue)})


def ceiling(
    a: SplitHalf, b: SplitHalf, confidence: float, clusters: int | None = None
) -> tuple[Correlation, FloatArray]:
    """sqrt(rel_a x rel_b) with its interval, and its resampled values.

    A resample with a reliability <= 0 has a ceiling of 0: leaving it out would raise the
    interval exactly when a task is noisy, and two negatives must not multiply into a positive.
    """
    drawn = np.sqrt(np.clip(_centred(a), 0.0, None) * np.clip(_centred(b), 0.0, None))
    if not (a.value > 0 and b.value > 0):  # NaN fails too
        return Correlation(
            reason="a task's ranking is not reliable at all (split-half reliability <= 0)"
        ), drawn
    value = float(np.sqrt(a.value * b.value))
    low, high = percentile_interval(drawn[:, None], confidence, clusters)
    low[0], high[0] = containing(value, low[0], high[0])
    return Correlation.of(value, low[0], high[0]), drawn


def _centred(found: SplitHalf) -> FloatArray:
    """A task's resampled reliabilities, moved down by how far their median runs above its
    estimate (never up). A resample holds copies of some conversations, and copies that fall
    in both halves make the halves agree: a noisy task's resampled reliability runs high, and
    the ceiling's interval with it, which made "distinct" come out on identical rankings."""
    defined = found.samples[~np.isnan(found.samples)]
    if not np.isfinite(found.value) or len(defined) == 0:
        return found.samples
    bias = max(float(np.median(defined)) - found.value, 0.0)
    return found.samples - bias


def disattenuated(
    rho: Correlation,
    rho_samples: FloatArray,
    top: Correlation,
    top_samples: FloatArray,
    confidence: float,
) -> Correlation:
    """rho / ceiling, with its interval from the same resamples; a resample with a ceiling of 0
    counts as unbounded above (leaving it out would narrow the interval when a task is noisy)."""
    if rho.value is None or top.value is None:
        return Correlation(reason=rho.reason or top.reason or "undefined")
    rho_drawn = rho_samples[: len(top_samples)]
    drawn = np.where(top_samples > 0, safe_ratio(rho_drawn, top_samples), np.inf)
    drawn[np.isnan(rho_drawn)] = np.nan  # an undefined rho stays undefined
    value = rho.value / top.value
    low, high = containing(value, *interval_with_infinity(drawn, confidence))
    lower, upper = (none_if_nan(end) if np.isfinite(end) else None for end in (low, high))
    open_above = "open above: a task ranks at random in too many resamples (no ceiling)"
    why = None if np.isfinite(high) else open_above
    return Correlation(value=value, ci_low=lower, ci_high=upper, reason=why)


def verdict(
    rho: Correlation,
    top: Correlation,
    fixed: Correlation,
    clusters: int | None = None,
    least: int = MIN_DISTINCT_CONVERSATIONS,
) -> tuple[Verdict | None, str]:
    """The three-way verdict and a line that says it: `distinct` when rho's interval lies
    wholly below the ceiling's and the ceiling's above 0, on at least `least` conversations;
    else `agree` when rho's interval lies above 0; else `cannot tell`, as without a ceiling.

    Taking rho's and the ceiling's ends separately ignores that they share resamples, and so
    errs towards silence; the disattenuated interval's own upper end below 1 (`fixed`, shown
    beside the verdict) said "distinct" on planted identical rankings. docs/report.md gives the
    planted rates behind `least` = 20.
    """
    if rho.value is None:
        return None, f"not computed: {rho.reason}"
    shown = f"rho {rho.value:.2f} [{_fmt(rho.ci_low)}, {_fmt(rho.ci_high)}]"
    if top.value is None or top.ci_low is None:
        reason = top.reason or "no ceiling"
        return "cannot tell", f"cannot tell: {shown}; the ceiling is too low: {reason}"
    shown += f", ceiling {top.value:.2f} [{_fmt(top.ci_low)}, {_fmt(top.ci_high)}]"
    if fixed.value is not None:
        high = "unbounded" if fixed.ci_high is None else _fmt(fixed.ci_high)
        shown += f", disattenuated {fixed.value:.2f} [{_fmt(fixed.ci_low)}, {high}]"
    if rho.ci_high is not None and rho.ci_high < top.ci_low and top.ci_low > 0:
        if clusters is not None and clusters < least:
            why = f"only {clusters} conversations: distinct needs {least} or more"
            return "cannot tell", f"cannot tell: {shown} (below the ceiling, but {why})"
        return "distinct", f"distinct: {shown} (agreement clearly below the ceiling)"
    if rho.ci_low is not None and rho.ci_low > 0:
        return "agree", f"agree: {shown}"
    return "cannot tell", f"cannot tell: {shown} (the data cannot separate the two)"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def rank_correlation(
    headlines: Mapping[str, MetricScores],
    model_names: Sequence[str],
    subjects: Sequence[int],
    reliability: Mapping[str, SplitHalf],
    *,
    permutations: int,
    rng: np.random.Generator,
    confidence: float,
    too_few: Mapping[str, str | None] | None = None,
    hint: str = "",
    clusters: Mapping[str, int] | None = None,
) -> RankCorrelation:
    """Every pair of tasks, on the models under test (`subjects`, frame codes) scored on both.

    `too_few` gives, per task, why it rests on too few conversations for an interval: a pair
    needs both tasks to rest on enough. `hint` follows every "fewer than 3 models" reason.
    `clusters` gives each task's clusters: a pair is expanded for the fewer of its two.
    """
    tasks = sorted(headlines)
    sizes = {task: (clusters or {}).get(task) for task in tasks}
    few = {task: (too_few or {}).get(task) for task in tasks}
    chosen = np.array(sorted(subjects), dtype=np.int64)

    def correlated(a: str, b: str) -> _Cell:
        """Tau-b and rho between two tasks' scores of the models under test scored on both
        (their point values alone where `too_few` says why)."""
        sa, sb = headlines[a], headlines[b]
        both = chosen[~np.isnan(sa.point[chosen]) & ~np.isnan(sb.point[chosen])]
        names = [model_names[int(m)] for m in both]
        if len(both) < 3:
            why = f"fewer than 3 models under test scored on both tasks ({len(both)})"
            why = f"{why}; {hint}" if hint else why
            return _Cell(names, Correlation(reason=why), Correlation(reason=why), None)
        args = (sa.point[both], sb.point[both], sa.samples[:, both], sb.samples[:, both])
        settings = (permutations, rng, confidence, _fewer(sizes[a], sizes[b]))
        tau = correlate(kendall_tau_b, *args, *settings)
        drawn = spearman_rho(args[2], args[3])
        rho = correlate(spearman_rho, *args, *settings, drawn)
        if (short := pair_reason(a, b, few)) is not None:
            tau, rho = _point_only(tau, short), _point_only(rho, short)
        return _Cell(names, tau, rho, drawn)

    cells = {(a, b): correlated(a, b) for a, b in combinations(tasks, 2)}
    adjusted = holm([cell.tau.p_value for cell in cells.values()])
    pairs = [
        _task_pair(a, b, cell, p, reliability, pair_reason(a, b, few), confidence, sizes)
        for ((a, b), cell), p in zip(cells.items(), adjusted, strict=True)
    ]
    names_of = [model_names[int(m)] for m in chosen]
    return RankCorrelation(
        tasks=tasks,
        models=sorted({name for pair in pairs for name in pair.models}),
        permutations=permutations,
        reason=_no_pairs_reason(tasks, pairs),
        reliability=[_reliability(t, reliability[t], names_of, few[t]) for t in tasks],
        kendall_tau_b=_matrix(tasks, {k: v.tau for k, v in cells.items()}),
        spearman=_matrix(tasks, {k: v.rho for k, v in cells.items()}),
        pairs=pairs,
    )


@dataclass(frozen=True)
class _Cell:
    """One pair of tasks: the models scored on both, tau and rho, and rho's resamples (None
    where fewer than 3 models leave nothing to correlate)."""

    names: list[str]
    tau: Correlation
    rho: Correlation
    rho_samples: FloatArray | None


def _task_pair(
    a: str,
    b: str,
    cell: _Cell,
    p_holm: float | None,
    reliability: Mapping[str, SplitHalf],
    short: str | None,
    confidence: float,
    sizes: Mapping[str, int | None],
) -> TaskPair:
    """A pair's ceiling, disattenuated rho and verdict (point values only where `short`)."""
    n = _fewer(sizes[a], sizes[b])
    top, top_samples = ceiling(reliability[a], reliability[b], confidence, n)
    rho_samples = np.full(1, np.nan) if cell.rho_samples is None else cell.rho_samples
    fixed = disattenuated(cell.rho, rho_samples, top, top_samples, confidence)
    if short is not None:
        top, fixed = _point_only(top, short), _point_only(fixed, short)
        decided: tuple[Verdict | None, str] = (None, f"no verdict: {short}")
    else:
        decided = verdict(cell.rho, top, fixed, n)
    return TaskPair(
        task_a=a,
        task_b=b,
        models=cell.names,
        kendall_tau_b=cell.tau,
        spearman=cell.rho,
        p_holm=p_holm,
        ceiling=top,
        disattenuated=fixed,
        verdict=decided[0],
        verdict_text=decided[1],
    )


def _no_pairs_reason(tasks: Sequence[str], pairs: Sequence[TaskPair]) -> str | None:
    if len(tasks) < 2:
        return "fewer than 2 tasks"
    if all(pair.kendall_tau_b.value is None for pair in pairs):
        return pairs[0].kendall_tau_b.reason
    return None


def _fewer(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else min(a, b)


def _point_only(value: Correlation, reason: str) -> Correlation:
    why = reason if value.value is not None else value.reason
    return value.model_copy(
        update={"ci_low": None, "ci_high": None, "p_value": None, "reason": why}
    )


def _reliability(
    task: str, found: SplitHalf, models: list[str], too_few: str | None
) -> Reliability:
    if not np.isfinite(found.value):
        why = "fewer than 3 models under test, or too few conversations"
        return Reliability(task=task, models=models, reason=why)
    reliability = Estimate.of(found.value, found.low, found.high, few=too_few)
    return Reliability(**reliability.model_dump(), task=task, models=models)


def _matrix(
    tasks: list[str], cells: Mapping[tuple[str, str], Correlation]
) -> list[list[Correlation]]:
    def cell(a: str, b: str) -> Correlation:
        if a == b:
            return Correlation(value=1.0)  # by definition: no interval to estimate
        return cells[(a, b)] if (a, b) in cells else cells[(b, a)]

    return [[cell(a, b) for b in tasks] for a in tasks]
