"""The cluster bootstrap against scipy, against known truths, and for its seeding."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from attunebench.analysis.bootstrap import (
    ClusterBootstrap,
    clusters_in,
    expanded_confidence,
    paired_difference,
    percentile_interval,
    ratio,
    resample_counts,
)
from planted.studies import coverage


def conversations_bootstrap(n: int, resamples: int, seed: int = 0) -> ClusterBootstrap:
    return ClusterBootstrap.create(np.arange(n), resamples, np.random.default_rng(seed))


def test_counts_draw_every_cluster_total_with_replacement() -> None:
    counts = resample_counts(50, 300, np.random.default_rng(1))
    assert counts.shape == (300, 50)
    assert (counts.sum(axis=1) == 50).all()
    assert (counts.max(axis=1) > 1).any()  # with replacement


def test_one_item_per_conversation_agrees_with_scipy_percentile() -> None:
    rng = np.random.default_rng(7)
    values = rng.binomial(1, 0.35, size=120).astype(float)
    boot = conversations_bootstrap(len(values), 20000, seed=3)
    point, samples = boot.means(values, np.arange(len(values)))
    low, high = boot.interval(samples)
    ref = stats.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=20000, rng=np.random.default_rng(4)
    ).confidence_interval
    assert point[0] == pytest.approx(values.mean())
    assert low[0] == pytest.approx(ref.low, abs=0.01)
    assert high[0] == pytest.approx(ref.high, abs=0.01)


def test_clustered_items_give_wider_intervals_than_pretending_independence() -> None:
    rng = np.random.default_rng(11)
    conversations = np.repeat(np.arange(40), 10)
    difficulty = rng.normal(0, 1.5, 40)[conversations]  # shared within a conversation
    values = (rng.random(400) < 1 / (1 + np.exp(-difficulty))).astype(float)
    clustered = conversations_bootstrap(40, 4000)
    _, samples = clustered.means(values, conversations)
    low, high = clustered.interval(samples)
    naive = stats.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=4000, rng=np.random.default_rng(0)
    ).confidence_interval
    assert (high[0] - low[0]) > 1.5 * (naive.high - naive.low)


def test_same_seed_same_interval_and_another_seed_differs() -> None:
    values = np.random.default_rng(2).random(60)
    intervals = [
        conversations_bootstrap(60, 500, seed).interval(
            conversations_bootstrap(60, 500, seed).means(values, np.arange(60))[1]
        )
        for seed in (5, 5, 6)
    ]
    assert intervals[0] == intervals[1]
    assert intervals[0] != intervals[2]


def test_group_means_keep_models_apart_and_skip_missing_values() -> None:
    values = np.array([1.0, 0.0, np.nan, 1.0, 1.0, 1.0])
    groups = np.array([0, 0, 0, 1, 1, 1])
    conversations = np.array([0, 1, 2, 0, 1, 2])
    point, samples = conversations_bootstrap(3, 200).means(values, conversations, groups, 3)
    assert point[0] == pytest.approx(0.5)
    assert point[1] == 1.0
    assert np.isnan(point[2])  # a group with no items has no mean, not zero
    assert samples.shape == (200, 3)


def test_a_statistic_of_sums_is_the_pooled_value_and_each_resamples_own() -> None:
    # Two conversations of very different sizes: 9 of 10 right, and 0 of 1. The share is the
    # pooled 9/11; the mean of the two conversations' shares (0.45) is the trap.
    conversations = np.array([0] * 10 + [1])
    right = np.array([1.0] * 9 + [0.0, 0.0])
    boot = conversations_bootstrap(2, 50, seed=4)
    point, drawn = boot.statistic(np.stack([right, np.ones(11)], axis=1), conversations, ratio)
    assert point[0] == pytest.approx(9 / 11)
    first, second = boot.counts[:, 0], boot.counts[:, 1]  # each resample's draws of each
    np.testing.assert_allclose(drawn[:, 0], 9 * first / (10 * first + second))
    assert drawn.shape == (50, 1)


def test_paired_difference_detects_a_planted_gap_and_not_a_null_one() -> None:
    rng = np.random.default_rng(5)
    conversations = np.repeat(np.arange(60), 5)
    base = (rng.random(300) < 0.5).astype(float)
    better = np.where(rng.random(300) < 0.3, 1.0, base)  # wins some items base lost
    boot = conversations_bootstrap(60, 2000)
    value, low, _ = paired_difference(boot, better, base, conversations)
    assert value > 0 and low > 0
    same_value, same_low, same_high = paired_difference(boot, base, base.copy(), conversations)
    assert (same_value, same_low, same_high) == (0.0, 0.0, 0.0)


def test_pairing_narrows_the_interval_when_models_share_item_difficulty() -> None:
    rng = np.random.default_rng(8)
    conversations = np.repeat(np.arange(50), 6)
    easy = rng.random(300) < 0.6
    a = np.where(easy, 1.0, (rng.random(300) < 0.2).astype(float))
    b = np.where(easy, 1.0, (rng.random(300) < 0.1).astype(float))
    boot = conversations_bootstrap(50, 3000)
    _, low, high = paired_difference(boot, a, b, conversations)
    _, samples_a = boot.means(a, conversations)
    other = conversations_bootstrap(50, 3000, seed=9)  # independent resamples: unpaired
    _, samples_b = other.means(b, conversations)
    unpaired_low, unpaired_high = percentile_interval(samples_a - samples_b)
    assert high - low < 0.8 * (unpaired_high[0] - unpaired_low[0])


def test_an_all_undefined_column_has_no_interval() -> None:
    samples = np.column_stack([np.linspace(0, 1, 101), np.full(101, np.nan)])
    low, high = percentile_interval(samples, 0.9)
    assert low[0] == pytest.approx(0.05) and high[0] == pytest.approx(0.95)
    assert np.isnan(low[1]) and np.isnan(high[1])


def test_the_expanded_level_follows_t_and_the_n_minus_one_variance() -> None:
    # sqrt(n / (n - 1)) x t(0.975, n - 1) as a normal quantile, by hand
    for n in (5, 10, 50):
        widened = np.sqrt(n / (n - 1)) * stats.t.ppf(0.975, n - 1)
        assert expanded_confidence(0.95, n) == pytest.approx(1 - 2 * stats.norm.sf(widened))
    assert expanded_confidence(0.95, 10) == pytest.approx(0.9829, abs=1e-4)
    assert expanded_confidence(0.95, 1000) == pytest.approx(0.95, abs=0.001)
    samples = np.random.default_rng(0).normal(size=(4000, 2))
    low, high = percentile_interval(samples, 0.95, np.array([5, 1000]))
    plain_low, plain_high = percentile_interval(samples, 0.95)
    assert high[0] - low[0] > 1.5 * (plain_high[0] - plain_low[0])  # 5 clusters: much wider
    assert high[1] - low[1] == pytest.approx(plain_high[1] - plain_low[1], rel=0.02)


def test_intervals_cover_the_planted_mean_at_the_minimum_of_conversations() -> None:
    # Planted truth: a known mean score over conversations of correlated items. The expanded
    # interval covers it about 93-94% of the time at 5 conversations (benchmarks/validity.py
    # measures 2,000 studies); the plain percentile interval, the trap, about 85%.
    expanded = coverage((5,), studies=300, resamples=1000, seed=2)[5]
    plain = coverage((5,), studies=300, resamples=1000, seed=2, expanded=False)[5]
    assert expanded >= 0.9 and plain <= 0.89 and expanded > plain + 0.04


def test_resampled_sums_of_whole_numbers_equal_double_precision_bit_for_bit() -> None:
    """`replicate` multiplies 0/1 scores' sums in single precision, where that is exact: the
    same numbers as double precision's; fractional scores stay in double precision. Planted:
    the mean of items that are all 1 in one group and all 0 in the other is 1 and 0 in every
    resample."""
    rng = np.random.default_rng(3)
    conversation = np.repeat(np.arange(150), 20)
    bootstrap = ClusterBootstrap.create(np.arange(150), 1000, rng)
    for values in (rng.integers(0, 2, size=(3000, 1)).astype(float), rng.random((3000, 1))):
        stacked = np.hstack([values, np.ones_like(values)])
        groups = np.arange(3000) % 3
        sums = bootstrap.sums(stacked, conversation, groups, 3)
        flat = sums.transpose(1, 0, 2).reshape(150, -1)
        expected = (bootstrap.counts @ flat).reshape(1000, 3, 2)
        assert np.array_equal(bootstrap.replicate(sums), expected)
    planted = (np.arange(3000) % 2 == 0).astype(float).reshape(-1, 1)
    point, drawn = bootstrap.means(planted, conversation, np.arange(3000) % 2, 2)
    assert point.tolist() == [1.0, 0.0]
    assert (drawn[:, 0] == 1.0).all() and (drawn[:, 1] == 0.0).all()


def test_clusters_in_counts_the_distinct_clusters_conversations_fall_in() -> None:
    """Planted: six conversations held by three participants; conversations of one
    participant count once (the trap: counting conversations), and no item counts none."""
    cluster_of = np.array([0, 0, 1, 2, 2, 2], dtype=np.int64)
    assert clusters_in(cluster_of, np.array([0, 1, 1, 0], dtype=np.int64)) == 1
    assert clusters_in(cluster_of, np.array([5, 0, 3, 1], dtype=np.int64)) == 2
    assert clusters_in(cluster_of, np.zeros(0, dtype=np.int64)) == 0
    rng = np.random.default_rng(8)
    for _ in range(20):
        conversations = rng.integers(0, 6, size=int(rng.integers(1, 12)))
        expected = np.unique(cluster_of[conversations]).size
        assert clusters_in(cluster_of, conversations) == expected
