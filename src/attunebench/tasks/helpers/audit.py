"""The metrics of the `judge_audit` task, each a function of summed per-record counts
(`audit_counts`), so a value and its bootstrap come from one definition: agreement with the
participant's pick, Cohen's kappa (Cohen 1960), flips between the orders, and length bias (a
judge that always prefers the longer reply scores 0.5 on the length-balanced agreement)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from attunebench.stats import FloatArray, Weights, safe_ratio
from attunebench.tasks.helpers.metrics import Metric
from attunebench.tasks.helpers.pairs import TIE, PairGold

ORDERS = ("ab", "ba")
MATCHED_RATIO = 1.25
# Column layout of `audit_counts`.
SCORE, SCORED, TABLE, AGREE, VERDICTS, FLIPS, BOTH = 0, 1, 2, 11, 12, 13, 14
LONGER_PICKS, SIDED = 15, 16
GOLD_LONGER, GOLD_SIDED = 17, 18
BALANCED = 19  # agree, verdicts where the participant chose the longer; then the shorter
MATCHED = 23  # agree, verdicts on length-matched pairs
WIDTH = 25


def _side(key: str, gold: PairGold) -> int:
    return 2 if key == TIE else 0 if key == gold.first else 1


def audit_counts(
    status: str, score: float | None, gold: PairGold, picks: Sequence[str]
) -> FloatArray:
    """One record's counts (zeros if failed); `picks`: the keys its parsed orders named."""
    out = np.zeros(WIDTH)
    if status == "failed":
        return out
    if score is not None:
        out[SCORE], out[SCORED] = score, 1.0
    truth = gold.key
    longer = None if gold.longer == TIE else gold.longer
    low, high = sorted((gold.len_first, gold.len_second))
    matched = low > 0 and high / low <= MATCHED_RATIO
    for pick in picks:
        agree = float(pick == truth)
        out[TABLE + 3 * _side(pick, gold) + _side(truth, gold)] += 1
        out[AGREE] += agree
        out[VERDICTS] += 1
        if pick != TIE and longer is not None:
            out[LONGER_PICKS] += pick == longer
            out[SIDED] += 1
        if truth != TIE and longer is not None:
            base = BALANCED if truth == longer else BALANCED + 2
            out[base] += agree
            out[base + 1] += 1
        if matched:
            out[MATCHED] += agree
            out[MATCHED + 1] += 1
    if len(picks) == 2:
        out[FLIPS] += picks[0] != picks[1]
        out[BOTH] += 1
    if truth != TIE and longer is not None:
        out[GOLD_LONGER] += truth == longer
        out[GOLD_SIDED] += 1
    return out


def kappa(table: FloatArray) -> FloatArray:
    """Cohen's kappa from a 3x3 table (last axis, judge-major): (p_o - p_e) / (1 - p_e)."""
    t = table.reshape(*table.shape[:-1], 3, 3)
    total = t.sum(axis=(-1, -2))
    observed = safe_ratio(np.trace(t, axis1=-2, axis2=-1), total)
    expected = safe_ratio((t.sum(axis=-1) * t.sum(axis=-2)).sum(axis=-1), total**2)
    room = np.where(1.0 - expected > 1e-12, 1.0 - expected, 0.0)  # p_e = 1: undefined
    return safe_ratio(observed - expected, room)


def _ratio(at: int) -> Callable[[FloatArray], FloatArray]:
    return lambda sums: safe_ratio(sums[..., at], sums[..., at + 1])


STATISTICS: dict[str, tuple[str, Callable[[FloatArray], FloatArray]]] = {
    "agreement": ("share of parsed verdicts naming the participant's pick", _ratio(AGREE)),
    "kappa": (
        "Cohen's kappa of verdicts and picks (first / second / tie)",
        lambda sums: kappa(sums[..., TABLE : TABLE + 9]),
    ),
    "flip_rate": ("share of pairs whose pick changed with the order", _ratio(FLIPS)),
    "longer_win_share": (
        "share of the judge's picks going to the longer reply",
        _ratio(LONGER_PICKS),
    ),
    "participant_longer_share": (
        "share of the participants' picks going to the longer reply",
        _ratio(GOLD_LONGER),
    ),
    "length_balanced_agreement": (
        "agreement averaged over pairs where the longer and where the shorter was chosen",
        lambda sums: (_ratio(BALANCED)(sums) + _ratio(BALANCED + 2)(sums)) / 2,
    ),
    "length_matched_agreement": ("agreement on pairs of similar length", _ratio(MATCHED)),
}

UNDEFINED = {
    "score": "no scored pairs",
    "agreement": "no parsed verdicts",
    "kappa": "no variation in the labels",
    "flip_rate": "no pair parsed in both orders",
    "longer_win_share": "no pick between replies of different length",
    "participant_longer_share": "no participant pick between replies of different length",
    "length_balanced_agreement": "participants never chose the longer, or never the shorter",
    "length_matched_agreement": "no pair of similar length",
}


def audit_metrics(counts: Callable[[Sequence[Any]], FloatArray]) -> tuple[Metric, ...]:
    """Every audit statistic as a metric over `counts(records)` (items x WIDTH)."""

    def statistic(finish: Callable[[FloatArray], FloatArray]) -> Callable[..., FloatArray]:
        def apply(values: FloatArray, weights: Weights) -> FloatArray:
            return finish(weights.sum(values))

        return apply

    return tuple(
        Metric(name, description, counts, statistic(finish), name != "flip_rate")
        for name, (description, finish) in STATISTICS.items()
    )
