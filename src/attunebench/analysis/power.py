"""How many conversations would separate two models? Power by resampling a pilot run.

For each task, the two models' scores on the items both answered are paired, and the pilot's
conversations are resampled (whole conversations, with replacement) into simulated studies of
increasing size. Each simulated study tests "no difference" with a cluster-robust test (the
ratio-estimator variance with conversations as clusters; Liang & Zeger 1986, Biometrika 73(1))
against Student's t with n - 1 degrees of freedom: with few clusters a normal critical value
rejects a true null too often (10% at 10 conversations); power is the share of studies that
reject at `alpha`. This treats the pilot's observed difference and its spread as the truth:
the simulation-from-the-empirical-distribution approach to sample size (Efron & Tibshirani
1993, "An Introduction to the Bootstrap").

So the pilot's difference must itself be real: when its interval (the same cluster-robust t
interval) covers 0, the tool says "no detectable difference in the pilot" and names no number
of conversations. Planning on a difference that may be noise named one for 166 of 200 pilots
of identical models (median 500 conversations).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from attunebench.analysis.contexts import paired_items
from attunebench.analysis.frame import FloatArray, Frame, headline_variant
from attunebench.stats import safe_ratio

DEFAULT_SIZES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
DEFAULT_SIMULATIONS = 1000
TARGET_POWER = 0.8
ALPHA = 0.05
CELLS_PER_BATCH = 1_000_000


@dataclass(frozen=True)
class PowerCurve:
    task: str
    variant: str
    pilot_conversations: int
    pilot_items: int
    difference: float | None
    sizes: tuple[int, ...]
    power: tuple[float, ...]
    needed: int | None
    note: str
    ci_low: float | None = None
    ci_high: float | None = None


def _rejections(
    differences: FloatArray,
    counts: FloatArray,
    size: int,
    simulations: int,
    critical: float,
    rng: np.random.Generator,
) -> int:
    draw = rng.integers(0, len(differences), size=(simulations, size))
    d, n = differences[draw], counts[draw]
    estimate = safe_ratio(d.sum(axis=1), n.sum(axis=1))
    residual = d - estimate[:, None] * n
    se = np.sqrt(size / max(size - 1, 1) * (residual**2).sum(axis=1)) / n.sum(axis=1)
    # a zero standard error rejects exactly when the estimate is not zero
    z = np.where(
        se > 0,
        np.abs(estimate) / np.where(se > 0, se, 1.0),
        np.where(np.abs(estimate) > 0, np.inf, 0.0),
    )
    return int((z > critical).sum())


def pilot_interval(
    differences: FloatArray, counts: FloatArray, alpha: float
) -> tuple[float, float, float]:
    """The pilot's mean difference and its cluster-robust t interval (per-conversation sums of
    differences and item counts), the test each simulated study makes."""
    size = len(differences)
    estimate = float(differences.sum() / counts.sum())
    residual = differences - estimate * counts
    se = float(np.sqrt(size / (size - 1) * (residual**2).sum()) / counts.sum())
    half = float(stats.t.ppf(1 - alpha / 2, size - 1)) * se
    return estimate, estimate - half, estimate + half


def simulated_power(
    differences: FloatArray,
    counts: FloatArray,
    size: int,
    simulations: int,
    alpha: float,
    rng: np.random.Generator,
) -> float:
    """Share of simulated studies of `size` conversations whose test rejects."""
    critical = float(stats.t.ppf(1 - alpha / 2, max(size - 1, 1)))
    batch = max(1, CELLS_PER_BATCH // size)  # bounds memory for large sizes
    done = rejected = 0
    while done < simulations:
        step = min(batch, simulations - done)
        rejected += _rejections(differences, counts, size, step, critical, rng)
        done += step
    return rejected / simulations


def power_curve(
    frame: Frame,
    task: str,
    model_a: str,
    model_b: str,
    *,
    sizes: Sequence[int] = DEFAULT_SIZES,
    simulations: int = DEFAULT_SIMULATIONS,
    alpha: float = ALPHA,
    target: float = TARGET_POWER,
    rng: np.random.Generator,
) -> PowerCurve:
    # A task with only person-hidden twins has no headline variant: no item to compare.
    variant = headline_variant(frame.task_variants(task)) or ""
    a, b, conversations = paired_items(frame, task, (variant, model_a), (variant, model_b))
    pilot = np.unique(conversations)
    if len(pilot) < 2:
        return PowerCurve(
            task,
            variant,
            len(pilot),
            len(a),
            None,
            (),
            (),
            None,
            "fewer than 2 conversations with items both models answered",
        )
    index = np.searchsorted(pilot, conversations)
    differences = np.bincount(index, a - b, len(pilot)).astype(np.float64)
    counts = np.bincount(index, minlength=len(pilot)).astype(np.float64)
    observed = float((a - b).mean())
    if np.array_equal(a, b):
        note = "these two models never differ: they scored the same on every paired item"
        return PowerCurve(task, variant, len(pilot), len(a), observed, (), (), None, note)
    _, low, high = pilot_interval(differences, counts, alpha)
    if low <= 0.0 <= high:
        note = (
            f"no detectable difference in the pilot: {observed:+.3f} [{low:+.3f}, {high:+.3f}] "
            "could be 0, so no number of conversations is named"
        )
        return PowerCurve(
            task, variant, len(pilot), len(a), observed, (), (), None, note, low, high
        )
    power = tuple(simulated_power(differences, counts, n, simulations, alpha, rng) for n in sizes)
    needed = next((n for n, p in zip(sizes, power, strict=True) if p >= target), None)
    if needed is None:
        note = f"not enough: power {power[-1]:.2f} at {sizes[-1]} conversations, the most tried"
    elif needed == sizes[0]:
        note = f"{sizes[0]} conversations or fewer reach power {target:.0%}"
    else:
        note = f"{needed} conversations reach power {target:.0%}"
    return PowerCurve(
        task, variant, len(pilot), len(a), observed, tuple(sizes), power, needed, note, low, high
    )
