"""stats.Weights: what one statistic read under several weights shares (the per-cluster sums,
a cross-fitting fold's weights) gives exactly what each computed afresh gives."""

from __future__ import annotations

import numpy as np

from attunebench.stats import (
    SINGLE_EXACT,
    SINGLE_ROWS,
    Weights,
    _known,
    drawn_clusters,
    exact_product,
)
from attunebench.tasks.helpers.metrics import Metric, mean_statistic


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


def parted(seed: int, whole: bool) -> tuple[Weights, np.ndarray]:
    """Weights and values whose column 0 codes three parts (codes 7, 2, 5 in no order)."""
    weights = weights_of(seed)
    rng = np.random.default_rng(seed + 10)
    codes = rng.choice([7.0, 2.0, 5.0], size=60).reshape(-1, 1)
    rest = rng.integers(0, 2, size=(60, 4)).astype(np.float64)
    if not whole:
        rest = rest + rng.normal(size=rest.shape) * 1e-3
    return weights, np.hstack([codes, rest])


def test_each_part_is_summed_as_its_own_items_alone_are_bit_for_bit() -> None:
    for whole in (True, False):  # label counts, exact; and fractions, summed part by part
        weights, values = parted(5, whole)
        split = weights.split(values)
        assert split.rest.shape == (60, 4)
        assert len(split.groups) == 3
        for code, (part, inside, total) in zip((2.0, 5.0, 7.0), split.groups, strict=True):
            mine = values[:, 0] == code
            np.testing.assert_array_equal(part, values[mine, 1:])
            alone = Weights(weights.counts, weights.cluster[mine])
            assert inside.sum(part).tobytes() == alone.sum(values[mine, 1:]).tobytes()
            assert inside.cluster_table(part).tobytes() == alone.cluster_table(part).tobytes()
            ones = np.ones((int(mine.sum()), 1))
            assert total.tobytes() == alone.sum(ones)[:, 0].tobytes()
        # the pooled reading: the same sums as every item read at once
        fresh = Weights(weights.counts, weights.cluster.copy())
        assert weights.sum(split.rest).tobytes() == fresh.sum(values[:, 1:]).tobytes()


def test_a_split_is_made_once_per_values_array_and_one_part_is_no_split() -> None:
    weights, values = parted(6, True)
    assert weights.split(values) is weights.split(values)
    assert weights.split(values.copy()) is not weights.split(values)
    one = values.copy()
    one[:, 0] = 3.0
    (only,) = weights.split(one).groups
    assert only[1] is weights and only[0].shape == (60, 4) and only[2].size == 0
    # counts that are not whole numbers: each part summed as its own, the same figures
    halves = Weights(weights.counts / 2.0, weights.cluster)
    for part, inside, _ in halves.split(values).groups:
        alone = Weights(halves.counts, inside.cluster.copy())
        assert inside.sum(part).tobytes() == alone.sum(part.copy()).tobytes()


class Counted:
    """A statistic that counts how often it is made."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> np.ndarray:
        self.calls += 1
        return np.array([float(self.calls)])


def test_unit_and_jackknife_share_the_split_parts_and_sum_them_as_fresh_weights_do() -> None:
    for whole in (True, False):
        weights, values = parted(7, whole)
        unit, jackknife = weights.unit(), weights.leave_one_out()
        for name, derived in (("unit", unit), ("jackknife", jackknife)):
            mine, theirs = weights.split(values).groups, derived.split(values).groups
            assert derived.split(values).rest is weights.split(values).rest
            for (part, inside, _), (same, there, total) in zip(mine, theirs, strict=True):
                assert same is part  # read once, not once per weights
                made = Counted()
                inside.keep(name, part, made)
                there.keep(name, part, made)
                assert made.calls == 1  # a part's statistic kept under one counts serves all
                alone = Weights(derived.counts, inside.cluster.copy())
                assert there.sum(part).tobytes() == alone.sum(part.copy()).tobytes()
                ones = np.ones((len(part), 1))
                assert total.tobytes() == alone.sum(ones)[:, 0].tobytes()


def test_a_kept_statistic_is_made_once_per_values_array() -> None:
    weights, values = parted(8, True)
    made: list[int] = []

    def make() -> np.ndarray:
        made.append(1)
        return weights.sum(values)

    first = weights.unit().keep("total", values, make)
    assert weights.leave_one_out().unit().keep("total", values, make) is first
    assert weights.keep("total", values, make) is first
    assert len(made) == 1
    weights.unit().keep("total", values.copy(), make)  # equal, but another array: made again
    weights.unit().keep("other", values, make)  # another statistic
    assert len(made) == 3


def test_a_split_leaves_out_clusters_never_drawn_or_empty_and_sums_the_same() -> None:
    weights, values = parted(9, True)
    counts = weights.counts.copy()
    counts[:, 3] = 0.0  # a cluster no resample draws
    cluster = np.where(weights.cluster == 5, 4, weights.cluster)  # and one with no item
    sparse = Weights(counts, cluster)
    for part, inside, total in sparse.split(values).groups:
        alone = Weights(counts, inside.cluster.copy())
        assert inside.sum(part).tobytes() == alone.sum(part.copy()).tobytes()
        assert total.tobytes() == alone.sum(np.ones((len(part), 1)))[:, 0].tobytes()
    # planted: a part's items all 1 sum to each resample's draws of their clusters
    part, inside, total = sparse.split(values).groups[0]
    drawn = counts[:, inside.cluster].sum(axis=1)
    np.testing.assert_array_equal(total, drawn)


def test_resample_products_in_single_precision_equal_double_bit_for_bit_where_exact() -> None:
    """Resample counts times whole numbers (label counts, items) are multiplied in single
    precision, where that is exact: the same numbers as double precision's. A fractional
    table (scores) or one whose sums could pass 2**24 is multiplied in double precision."""
    rng = np.random.default_rng(7)
    clusters, rows = 200, 2000
    counts = rng.multinomial(clusters, np.full(clusters, 1.0 / clusters), size=rows)
    weights = Weights(counts.astype(np.float64), rng.integers(0, clusters, size=3000))
    labels = rng.integers(0, 4, size=(3000, 6)).astype(np.float64)  # whole: single precision
    scores = rng.random((3000, 2))  # fractional: double precision
    large = labels * 4096.0 + 1.0  # whole, but its sums pass 2**24: double precision
    assert _known(weights.counts)[1] is not None  # whole counts, rows of 200: a single copy
    for values, single in ((labels, True), (scores, False), (large, False)):
        table = weights.cluster_table(values)
        assert exact_product(weights.whole(), table, SINGLE_EXACT) is single
        expected = weights.counts @ table  # double precision, as before
        assert np.array_equal(weights.sum(values), expected)
        held = np.asarray(table.any(axis=1))
        assert np.array_equal(weights.product(table, held), weights.counts[:, held] @ table[held])
    # planted: the counts of every resample add to the clusters drawn, so a table of ones sums
    # to that in every row
    assert np.array_equal(weights.product(np.ones((clusters, 1)))[:, 0], np.full(rows, clusters))
    product = weights.product(weights.cluster_table(labels))
    assert product.dtype == np.float64 and np.array_equal(product, weights.sum(labels))


def test_a_metric_of_several_rows_per_record_gives_what_fresh_weights_of_its_rows_give() -> None:
    """A metric whose records give several rows each (PANAS items, a pair's two orders) reads
    its point and its resamples under one set of its rows' weights, sharing their sums: the
    same numbers, bit for bit, as weights made afresh for each. Planted: every record's rows
    are 1 and 0 alike, so the mean is a half in every resample."""
    weights = weights_of(11, items=80, clusters=16, rows=300)
    owners = np.repeat(np.arange(80), 3)  # three rows per record
    rng = np.random.default_rng(12)
    values = rng.random((240, 1))
    metric = Metric("m", "", lambda records: (values, owners), mean_statistic)
    point, drawn = metric.evaluate_values((values, owners), weights)
    fresh = Weights(weights.counts, weights.cluster[owners])
    assert point == mean_statistic(values, Weights(weights.counts, fresh.cluster).unit())[0]
    assert np.array_equal(drawn, mean_statistic(values, fresh), equal_nan=True)
    halves = (np.arange(160) % 2 == 0).astype(np.float64).reshape(-1, 1)  # per record: 1, 0
    point, drawn = metric.evaluate_values((halves, np.arange(160) // 2), weights)
    assert point == 0.5
    assert (drawn[~np.isnan(drawn)] == 0.5).all() and not np.isnan(drawn).all()


def test_drawn_clusters_are_those_some_resample_draws_read_once_per_counts() -> None:
    """Planted: clusters 2 and 5 never drawn. The resamples' counts are read once (the same
    read-only answer again); other counts, equal or not, are read for themselves (the trap:
    an answer kept for one array served for another)."""
    rng = np.random.default_rng(4)
    counts = rng.integers(1, 3, size=(SINGLE_ROWS, 8)).astype(np.float64)
    counts[:, [2, 5]] = 0.0
    expected = [c not in (2, 5) for c in range(8)]
    found = drawn_clusters(counts)
    assert found.tolist() == expected and not found.flags.writeable
    assert drawn_clusters(counts) is found
    other = counts.copy()
    other[3, 2] = 1.0
    assert drawn_clusters(other).tolist() == [c != 5 for c in range(8)]
    assert drawn_clusters(counts).tolist() == expected
    few = counts[:3].copy()  # a few rows (a point's, a jackknife's): read each time
    few[0, 5] = 2.0
    assert drawn_clusters(few).tolist() == [c != 2 for c in range(8)]
