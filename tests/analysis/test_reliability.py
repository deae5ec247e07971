"""Split-half reliability of a task's ranking: the interval is that of the averaged statistic.

Planted truth: tables of (conversations x models) score sums drawn from a known model, many
times over. The spread of the point estimate across independent tables is the sampling
uncertainty the interval must describe; one random split per resample (the old way) adds a
single split's luck and gave intervals about three times too wide, reaching -1.
"""

from __future__ import annotations

import numpy as np

from attunebench.analysis.agreement.reliability import (
    ConversationTable,
    SplitHalf,
    split_draws,
    split_half,
)
from attunebench.analysis.bootstrap import ClusterBootstrap

MODELS, CONVERSATIONS, ITEMS = 8, 60, 4
EFFECTS = np.linspace(0.0, 0.25, MODELS)


def table(seed: int, noise: float) -> ConversationTable:
    """Each model's items: its effect, a conversation effect every model shares, and noise."""
    rng = np.random.default_rng([seed, 1])
    shared = rng.normal(0.0, 0.3, (CONVERSATIONS, 1, 1))
    scores = (
        EFFECTS[None, :, None] + shared + rng.normal(0.0, noise, (CONVERSATIONS, MODELS, ITEMS))
    )
    return ConversationTable(scores.sum(axis=2), np.full((CONVERSATIONS, MODELS), float(ITEMS)))


def reliability(seed: int, noise: float) -> SplitHalf:
    bootstrap = ClusterBootstrap.create(
        np.arange(CONVERSATIONS), 500, np.random.default_rng([seed, 2])
    )
    return split_half(table(seed, noise), bootstrap, np.random.default_rng([seed, 3]))


def test_the_interval_is_as_wide_as_the_estimates_spread_across_samples() -> None:
    # the middle 80% of the point estimates over independent samples, against the middle 80%
    # of each sample's resampled values (the 95% ends of 60 estimates are too unsteady); one
    # split per resample made the latter 3.3 times the former
    points = [reliability(seed, 0.6).value for seed in range(60)]
    low, high = np.percentile(points, [10, 90])
    found = [reliability(seed, 0.6) for seed in range(100, 112)]
    widths = [np.subtract(*np.percentile(f.samples, [90, 10])) for f in found]
    assert 0.7 * (high - low) < np.median(widths) < 1.4 * (high - low), (widths, high - low)
    truth = float(np.mean(points))
    assert sum(f.low <= truth <= f.high for f in found) >= 11


def test_a_noisy_ranking_keeps_an_informative_interval() -> None:
    # reliability about 0.6: one split per resample reached -1. With several splits the
    # interval stays above 0 and covers the mean estimate in most samples (copies of a drawn
    # conversation in both halves lift rho a little when the ranking is this noisy)
    points = [reliability(seed, 1.0).value for seed in range(60)]
    found = [reliability(seed, 1.0) for seed in range(100, 112)]
    assert all(f.low > -0.2 for f in found)
    assert sum(f.low <= float(np.mean(points)) <= f.high for f in found) >= 9


def test_a_resamples_draws_are_split_in_two_equal_halves() -> None:
    rng = np.random.default_rng(0)
    counts = rng.multinomial(30, np.full(30, 1 / 30), size=4).astype(float)
    firsts = split_draws(rng, counts, 5)
    assert firsts.shape == (20, 30)
    assert (firsts.sum(axis=1) == 15).all()
    assert (firsts <= np.repeat(counts, 5, axis=0)).all() and (firsts >= 0).all()


def test_a_half_is_the_draws_with_the_smallest_keys_whatever_the_rows_sizes() -> None:
    # Planted: rows of unequal sizes (one odd, one empty). The half, counted per cluster, must
    # be the draws whose keys (the same generator's) are the smallest, row by row, sorted
    # directly; a trap: the padding past a smaller row's draws is never taken.
    counts = np.array([[3.0, 0.0, 2.0, 1.0], [1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    found = split_draws(np.random.default_rng(4), counts, 3)
    draws = counts.astype(int)
    total = int(draws.sum(axis=1).max())
    keys = np.random.default_rng(4).random((3, 3, total))
    for row, drawn in enumerate(draws):
        codes = np.repeat(np.arange(4), drawn)
        for split in range(3):
            half = codes[np.argsort(keys[row, split, : len(codes)])[: len(codes) // 2]]
            expected = np.bincount(half, minlength=4)
            assert np.array_equal(found[row * 3 + split], expected), (row, split)


def test_each_clusters_count_in_the_half_is_read_at_its_own_runs_ends() -> None:
    # Planted: 60 resamples of 40 clusters, 7 splits each, the first and last cluster of
    # every other resample never drawn. Known answer: each cluster's count in the half from
    # the same keys sorted directly, row by row. A trap: a run read at another row's or
    # split's ends (every row's counts are read from one flat array) would count wrongly.
    rng = np.random.default_rng(11)
    counts = rng.multinomial(40, np.full(40, 1 / 40), size=60)
    counts[::2, 0], counts[::2, -1] = 0, 0
    counts[::2, 1] += 40 - counts[::2].sum(axis=1)  # every row still holds 40 draws
    found = split_draws(np.random.default_rng(12), counts.astype(float), 7)
    keys = np.random.default_rng(12).random((60, 7, 40))
    for row, drawn in enumerate(counts):
        codes = np.repeat(np.arange(40), drawn)
        for split in range(7):
            half = codes[np.argsort(keys[row, split])[:20]]
            assert np.array_equal(found[row * 7 + split], np.bincount(half, minlength=40))
