"""stats.Weights: what one statistic read under several weights shares (the per-cluster sums,
a cross-fitting fold's weights) gives exactly what each computed afresh gives."""

from __future__ import annotations

import numpy as np

from attunebench.stats import Weights


def weights_of(seed: int, items: int = 60, clusters: int = 12, rows: int = 40) -> Weights:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 3, size=(rows, clusters)).astype(np.float64)
    return Weights(counts, rng.integers(0, clusters, size=items))


def test_each_fold_weighs_its_own_items_as_the_whole_does_and_the_others_nothing() -> None:
    weights = weights_of(0)
    values = np.random.default_rng(1).normal(size=(60, 2))
    folds = np.arange(60) % 3
    found = weights.within(folds)
    assert len(found) == 3
    for fold, (inside, total) in enumerate(found):
        mine = folds == fold
        alone = Weights(weights.counts, weights.cluster[mine])  # the fold's items alone
        np.testing.assert_allclose(inside.sum(values), alone.sum(values[mine]))
        np.testing.assert_allclose(total, alone.sum(np.ones((int(mine.sum()), 1)))[:, 0])
        # planted: a fold whose items are all 1 while the others are 1000 sums to its total
        planted = np.where(mine, 1.0, 1000.0).reshape(-1, 1)
        np.testing.assert_allclose(inside.sum(planted)[:, 0], total)


def test_the_folds_are_made_once_per_fold_array() -> None:
    weights = weights_of(2)
    folds = np.arange(60) % 4
    assert weights.within(folds) is weights.within(folds)
    other = folds.copy()  # equal, but another array: made again, with equal sums
    again = weights.within(other)
    assert again is not weights.within(folds)
    values = np.arange(60.0).reshape(-1, 1)
    for (a, _), (b, _) in zip(weights.within(folds), again, strict=True):
        np.testing.assert_array_equal(a.sum(values), b.sum(values))


def test_unit_and_jackknife_weights_share_the_cluster_sums_and_equal_fresh_ones() -> None:
    weights = weights_of(3)
    values = np.random.default_rng(4).normal(size=(60, 3))
    table = weights.cluster_table(values)
    unit, jackknife = weights.unit(), weights.leave_one_out()
    assert unit.cluster_table(values) is table and jackknife.cluster_table(values) is table
    assert not table.flags.writeable  # shared, so read-only
    fresh_unit = Weights(unit.counts, weights.cluster.copy())
    fresh_jackknife = Weights(jackknife.counts, weights.cluster.copy())
    np.testing.assert_array_equal(unit.sum(values), fresh_unit.sum(values))
    np.testing.assert_array_equal(jackknife.sum(values), fresh_jackknife.sum(values))
    # another values array is summed afresh, not read from the first one's table
    doubled = 2.0 * values
    np.testing.assert_array_equal(unit.sum(doubled), 2.0 * fresh_unit.sum(values))
