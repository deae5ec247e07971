"""How many conversations would separate two models on a task's headline? Power from a pilot.

The statistic is the report's paired difference (`analysis.comparisons.differences`): a
simulated study of n conversations draws n of the pilot's with replacement, and rejects "no
difference" where its own expanded percentile interval excludes 0 (a nested bootstrap: Efron &
Tibshirani 1993). docs/report.md ("Power") gives the reasoning and the checks
(`benchmarks/validity.py`, `power_calibration`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from attunebench.analysis.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from attunebench.analysis.comparisons.differences import (
    HeadlinePair,
    headline_pair,
    report_cell,
    resampled_difference,
)
from attunebench.analysis.frame import BoolArray, FloatArray
from attunebench.analysis.loading import Runs

DEFAULT_SIZES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
DEFAULT_SIMULATIONS = 400
STUDY_RESAMPLES = 200  # each simulated study's own bootstrap, for its interval
TARGET_POWER = 0.8
# The normal quantiles of the target power and of the two-sided test at the report's confidence
WANTED = float(stats.norm.ppf(TARGET_POWER))
CRITICAL = float(stats.norm.ppf(1.0 - (1.0 - DEFAULT_CONFIDENCE) / 2.0))
ROWS_PER_BATCH = 400_000  # bounds memory: studies x resamples x conversations per batch


def study_rejects(
    pair: HeadlinePair,
    studies: FloatArray,
    size: int,
    resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> BoolArray:
    """Whether the report's interval of each study (a row of cluster counts) excludes 0."""
    _, low, high = pair.resampled(studies, size, resamples, confidence, rng)
    return np.asarray((low > 0.0) | (high < 0.0))


def simulated_power(
    pair: HeadlinePair, size: int, rng: np.random.Generator, settings: Settings
) -> float:
    """Share of studies of `size` conversations drawn from the pilot that reject."""
    simulations, resamples = settings.simulations, settings.resamples
    batch = max(1, ROWS_PER_BATCH // (resamples * pair.clusters))
    rejected = 0
    for done in range(0, simulations, batch):
        step = min(batch, simulations - done)
        studies = rng.multinomial(size, np.full(pair.clusters, 1.0 / pair.clusters), step)
        counts = studies.astype(np.float64)
        found = study_rejects(pair, counts, size, resamples, DEFAULT_CONFIDENCE, rng)
        rejected += int(found.sum())
    return rejected / simulations


def conversations_for(
    sizes: Sequence[int], power: Sequence[float], simulations: int
) -> float | None:
    """Where the power curve first reaches the target: interpolated between the sizes around it
    on the probit scale against sqrt(n), or below the smallest size as if the probit grew as
    sqrt(n) from there; None where no size reaches it."""
    first = next((i for i, p in enumerate(power) if p >= TARGET_POWER), None)
    if first is None:
        return None
    edge = 0.5 / simulations  # a share of 0 or 1 from finitely many studies
    probit = stats.norm.ppf(np.clip(np.asarray(power, dtype=np.float64), edge, 1.0 - edge))
    root = np.sqrt(np.asarray(sizes, dtype=np.float64))
    if first == 0:  # the probit of power plus the critical value grows about as sqrt(n)
        return float(sizes[0] * ((WANTED + CRITICAL) / (probit[0] + CRITICAL)) ** 2)
    low, high = probit[first - 1], probit[first]
    step = (WANTED - low) / (high - low) if high > low else 1.0
    return float((root[first - 1] + step * (root[first] - root[first - 1])) ** 2)


@dataclass(frozen=True)
class PowerCurve:
    """One task's power to separate two models, from a pilot: the central figure (`needed`),
    the range (`needed_high` None where the pilot cannot bound it above) and `note`, a sentence."""

    task: str
    variant: str
    metric: str
    pilot_conversations: int
    pilot_items: int
    difference: float | None
    sizes: tuple[int, ...]
    power: tuple[float, ...]
    needed: int | None = None
    note: str = ""
    ci_low: float | None = None
    ci_high: float | None = None
    needed_low: int | None = None
    needed_high: int | None = None
    range: str = ""  # the range as stated ("14 to 132", "14 to more than 5,000")
    stretch: float = 1.0  # the jackknife's standard error over the bootstrap's (`understated`)


@dataclass(frozen=True)
class Settings:
    sizes: tuple[int, ...] = DEFAULT_SIZES
    simulations: int = DEFAULT_SIMULATIONS
    resamples: int = STUDY_RESAMPLES  # each simulated study's bootstrap
    pilot_resamples: int = DEFAULT_RESAMPLES  # the pilot's own interval, as the report's


def power_curve(
    runs: Runs,
    task: str,
    model_a: str,
    model_b: str,
    *,
    rng: np.random.Generator,
    settings: Settings | None = None,
) -> PowerCurve:
    """Power to separate `model_a` from `model_b` on the task's headline, from the pilot runs."""
    frame = runs.frame
    cell = report_cell(runs, frame, task)
    pair = None if cell is None else headline_pair(frame, cell, model_a, model_b)
    if cell is None or pair is None:
        note = "no item of the headline's cell that both models answered"
        variant = "" if cell is None else cell.variant
        return PowerCurve(task, variant, "", 0, 0, None, (), (), None, note)
    names = (model_a, model_b)
    return pair_power(pair, task, cell.variant, names, rng, settings or Settings())


def pair_power(
    pair: HeadlinePair,
    task: str,
    variant: str,
    names: tuple[str, str],
    rng: np.random.Generator,
    settings: Settings,
) -> PowerCurve:
    """The pilot's difference and interval, the power at each size, the central figure and range."""
    empty = PowerCurve(task, variant, pair.metric.name, pair.clusters, pair.items, None, (), ())
    if pair.clusters < 2:
        return replace(empty, note="fewer than 2 conversations with items both models answered")
    difference, drawn, low, high = resampled_difference(
        pair, settings.pilot_resamples, DEFAULT_CONFIDENCE, rng
    )
    if np.isnan(difference):
        return replace(empty, note=f"{pair.metric.name} is undefined on these items")
    if not np.any(drawn[~np.isnan(drawn)]) and difference == 0.0:
        note = f"these two models never differ: the same {pair.metric.name} in every resample"
        return replace(empty, difference=difference, note=note)
    stretch = understated(pair, drawn)
    found = replace(empty, difference=difference, ci_low=low, ci_high=high, stretch=stretch)
    power = tuple(  # a study of n is one of n / stretch^2 of the pilot's (see the docstring)
        simulated_power(pair, max(2, round(n / stretch**2)), rng, settings) for n in settings.sizes
    )
    central = conversations_for(settings.sizes, power, settings.simulations)
    spread = stretch * float(np.nanstd(drawn)) * np.sqrt(pair.clusters)
    ends = _range(central, found, spread)
    found = replace(found, sizes=tuple(settings.sizes), power=power)
    largest, least = settings.sizes[-1], settings.sizes[0]
    return replace(
        found,
        needed=None if central is None else max(_whole(central) or 0, least),
        needed_low=max(min(_whole(ends[0]) or largest, largest), least),
        needed_high=None if ends[1] > largest else max(_whole(ends[1]) or 0, least),
        note=sentence(found, *names, central, ends, settings.sizes),
        range=stated_range(ends, settings.sizes),
    )


def understated(pair: HeadlinePair, drawn: FloatArray) -> float:
    """How far the pilot's bootstrap understates the spread of a headline the report widens to
    the cluster jackknife (`Metric.widen`): the jackknife's standard error over the bootstrap's,
    at least 1."""
    if pair.metric.widen is None:
        return 1.0
    leave_one_out = 1.0 - np.eye(pair.clusters)
    jack = pair.differences(leave_one_out)
    jack = jack[~np.isnan(jack)]
    spread = float(np.nanstd(drawn))
    if len(jack) < 2 or spread == 0.0:
        return 1.0
    jack_se = float(np.sqrt((len(jack) - 1) / len(jack) * np.sum((jack - jack.mean()) ** 2)))
    return max(1.0, jack_se / spread)


def _whole(value: float | None) -> int | None:
    return None if value is None or not np.isfinite(value) else int(np.ceil(value))


def _range(central: float | None, curve: PowerCurve, spread: float) -> tuple[float, float]:
    """The conversations for the target power at the ends of the pilot's interval (infinite
    where it reaches 0): scaled from the central figure, or else from the normal approximation."""
    low, high, difference = curve.ci_low, curve.ci_high, curve.difference
    assert low is not None and high is not None and difference is not None
    scale = (CRITICAL + WANTED) * spread

    def at(effect: float) -> float:
        if effect == 0.0:
            return float("inf")
        if central is not None:
            return central * (difference / effect) ** 2
        return float((scale / effect) ** 2)

    near = 0.0 if low <= 0.0 <= high else min(abs(low), abs(high))
    return at(max(abs(low), abs(high))), at(near)


def _count(value: float, sizes: Sequence[int]) -> str:
    """A number of conversations as stated, within the sizes simulated."""
    if value > sizes[-1]:
        return f"more than {sizes[-1]:,}"
    return f"{max(int(np.ceil(value)), sizes[0]):,}"


def sentence(
    curve: PowerCurve,
    model_a: str,
    model_b: str,
    central: float | None,
    ends: tuple[float, float],
    sizes: Sequence[int],
) -> str:
    """The figures in words: the pilot's difference and interval, the central figure, the range."""
    target = f"{TARGET_POWER:.0%}"
    pilot = (
        f"{curve.metric}, {model_a} - {model_b}: {curve.difference:+.3f} "
        f"[{curve.ci_low:+.3f}, {curve.ci_high:+.3f}] on {curve.pilot_conversations} "
        "pilot conversations"
    )
    if central is not None:
        named = f"about {_count(central, sizes)} conversations reach power {target}"
    elif curve.difference == 0.0:
        named = "no central figure (the pilot's difference is 0)"
    else:
        named = f"more than {sizes[-1]:,} conversations are needed for power {target}"
    return f"{pilot}; {named}, range {stated_range(ends, sizes)}"


def stated_range(ends: tuple[float, float], sizes: Sequence[int]) -> str:
    """The range in words: an infinite upper end is one the pilot cannot bound."""
    low, high = ends
    if np.isinf(high):
        return (
            f"from {_count(low, sizes)}, not enough pilot data for an upper end (the "
            "pilot's interval reaches 0)"
        )
    return f"{_count(low, sizes)} to {_count(high, sizes)}"
