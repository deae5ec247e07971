"""Statistics helpers below every package that computes a number.

`Weights` is what makes a metric defined once (see `tasks.helpers.metrics`): with weights of 1 a
statistic is the metric's value, with a cluster bootstrap's resample counts it is every
resample's value at once.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
NEWTON_STEPS = 50
LOGIT_CLIP = 30.0  # beyond it the fitted probability is 0 or 1 to double precision
# Counts with at least this many rows (the resamples') are multiplied in single precision where
# that is exact (`Weights.product`); fewer, the copy would cost more than it saves.
SINGLE_ROWS = 64
SINGLE_EXACT = 2.0**24  # single precision holds every whole number below it


def safe_ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """numerator / denominator, NaN where the denominator is 0."""
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def group_sums(group: IntArray, table: FloatArray, groups: int) -> FloatArray:
    """The (groups, k) sums of the rows of `table` (items, k) by each item's group: what
    `np.add.at(out, group, table)` adds, in the same order, by one `np.bincount`."""
    width = table.shape[1]
    flat = (group[:, None] * width + np.arange(width)).ravel()
    sums = np.bincount(flat, weights=table.ravel(), minlength=groups * width)
    return sums.reshape(groups, width).astype(np.float64, copy=False)


@dataclass(frozen=True)
class Weights:
    """Per-item weights for B resamples at once: item i weighs `counts[b, cluster[i]]`.

    `Weights.ones(n)` is the single row of unit weights that gives a point estimate. Weighted
    sums are kept per values array, so metrics that share a reading (micro and macro F1, the
    judge audit's statistics) share its sums too; they are read-only.
    """

    counts: FloatArray  # (B, clusters)
    cluster: IntArray  # (items,): each item's cluster
    _sums: dict[int, tuple[FloatArray, FloatArray]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _within: dict[int, tuple[IntArray, list[tuple[Weights, FloatArray]]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # Per-cluster sums, shared with the weights made from these on the same clusters (`unit`,
    # `leave_one_out`): a statistic read under all three sums each cluster's items once.
    _tables: dict[int, tuple[FloatArray, FloatArray]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # `unit` and `leave_one_out`, made once: the metrics read under them share their sums.
    _derived: dict[str, Weights] = field(default_factory=dict, repr=False, compare=False)
    # Whether the counts are whole numbers and their largest row total (`exact_product`).
    _whole: dict[str, tuple[bool, float]] = field(default_factory=dict, repr=False, compare=False)
    _split: dict[int, tuple[FloatArray, Split]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # What `split` finds whatever the counts, shared as `_tables` is.
    _parts: dict[int, tuple[FloatArray, Parts]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # Statistics of a values array that do not depend on the counts (`keep`), shared as
    # `_tables` is.
    _kept: dict[tuple[str, int], tuple[FloatArray, FloatArray]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def ones(cls, items: int) -> Weights:
        return cls(np.ones((1, 1)), np.zeros(items, dtype=np.int64))

    @classmethod
    def of_items(cls, weights: Sequence[float]) -> Weights:
        """One resample with an explicit weight per item (each item its own cluster)."""
        row = np.asarray(weights, dtype=np.float64).reshape(1, -1)
        return cls(row, np.arange(row.shape[1], dtype=np.int64))

    @property
    def rows(self) -> int:
        return int(self.counts.shape[0])

    def unit(self) -> Weights:
        """One row weighing every item 1, its clusters kept: the point estimate of a statistic
        that reads the clusters (a bias correction), equal to `ones` for any other."""
        made = self._derived.get("unit")
        if made is None:
            ones = np.ones((1, self.counts.shape[1]))
            made = self._derived["unit"] = self._alike(ones)
        return made

    def leave_one_out(self) -> Weights:
        """The cluster jackknife: one row per cluster that holds items, weighing that cluster
        0 and every other 1."""
        made = self._derived.get("leave_one_out")
        if made is None:
            held = np.unique(self.cluster)
            counts = np.ones((len(held), self.counts.shape[1]))
            counts[np.arange(len(held)), held] = 0.0
            made = self._derived["leave_one_out"] = self._alike(counts)
        return made

    def _alike(self, counts: FloatArray) -> Weights:
        """Other counts on the same clusters, sharing what does not depend on the counts: the
        per-cluster sums, the split groups and the kept statistics."""
        return Weights(
            counts, self.cluster, _tables=self._tables, _parts=self._parts, _kept=self._kept
        )

    def keep(self, name: str, values: FloatArray, make: Callable[[], FloatArray]) -> FloatArray:
        """`make()`, a statistic `name` of `values` that does not depend on the counts (a bias
        estimated on the items), made once for these weights and those made from them on the
        same clusters (`unit`, `leave_one_out`, a split's groups under each)."""
        kept = self._kept.get((name, id(values)))
        if kept is not None and kept[0] is values:
            return kept[1]
        found = make()
        self._kept[name, id(values)] = (values, found)
        return found

    def cluster_table(self, values: FloatArray) -> FloatArray:
        """The (clusters, k) sums of `values` (items, k) per cluster (read-only)."""
        kept = self._tables.get(id(values))
        if kept is not None and kept[0] is values:
            return kept[1]
        table = group_sums(self.cluster, values.reshape(len(values), -1), self.counts.shape[1])
        table.flags.writeable = False
        self._tables[id(values)] = (values, table)
        return table

    def sum(self, values: FloatArray) -> FloatArray:
        """Weighted column sums (B, k) of `values` (items, k): per-cluster sums, then one
        product with the counts."""
        kept = self._sums.get(id(values))
        if kept is not None and kept[0] is values:
            return kept[1]
        result = self.product(self.cluster_table(values))
        result.flags.writeable = False
        self._sums[id(values)] = (values, result)
        return result

    def within(self, groups: IntArray) -> list[tuple[Weights, FloatArray]]:
        """Per group of the items (a cross-fitting fold; in the groups' sorted order): weights
        that weigh the group's items as these do and every other item nothing (they join an
        added cluster of weight 0), with each row's total weight of the group's items. Kept per
        `groups` array, so that the metrics read within the same groups share them and the
        sums they keep."""
        kept = self._within.get(id(groups))
        if kept is not None and kept[0] is groups:
            return kept[1]
        outside = self.counts.shape[1]
        counts = np.hstack([self.counts, np.zeros((self.rows, 1))])
        if self.rows >= SINGLE_ROWS:  # a column of zeros added changes neither
            whole, single = _known(self.counts)
            zeros = np.zeros((self.rows, 1), dtype=np.float32)
            _remember(
                _KNOWN, counts, (whole, None if single is None else np.hstack([single, zeros]))
            )
        self.whole()  # read once here, for every fold's weights
        found = []
        for group in np.unique(groups).tolist():
            inside = Weights(counts, np.where(groups == group, self.cluster, outside))
            inside._whole.update(self._whole)  # a column of zeros added changes neither
            found.append((inside, inside.sum(np.ones((len(groups), 1)))[:, 0]))
        self._within[id(groups)] = (groups, found)
        return found

    def split(self, values: FloatArray) -> Split:
        """`values` whose column 0 codes a group of the items (a corpus part), split by it (see
        `Split`). Kept per `values` array, so that the statistics read within the same groups,
        or over them pooled, share the sums their weights keep."""
        kept = self._split.get(id(values))
        if kept is not None and kept[0] is values:
            return kept[1]
        parts = self._parts_of(values)
        if parts.tables is None:
            found = Split(parts.rest, [(parts.rest, self, np.empty(0))])
        else:
            found = Split(parts.rest, self._groups(parts))
        self._split[id(values)] = (values, found)
        return found

    def _parts_of(self, values: FloatArray) -> Parts:
        """`values` split by its column 0, as far as the counts do not matter (see `Parts`):
        found once for these weights, their `unit` and their `leave_one_out`.

        Every group's per-cluster sums (and item counts) come from one pass over the items:
        each sum adds the same items in the same order as the group's own would."""
        kept = self._parts.get(id(values))
        if kept is not None and kept[0] is values:
            return kept[1]
        rest = values[:, 1:]
        distinct, group = np.unique(values[:, 0], return_inverse=True)
        found = Parts(rest, None, [])
        if distinct.size > 1:
            clusters, width, group = self.counts.shape[1], rest.shape[1], group.reshape(-1)
            items = np.hstack([rest, np.ones((len(rest), 1))])
            tables = group_sums(group * clusters + self.cluster, items, distinct.size * clusters)
            tables = tables.reshape(distinct.size, clusters, width + 1)
            found = Parts(rest, tables, [])
            for code in range(distinct.size):
                rows = np.flatnonzero(group == code)
                part, unit = rest[rows], Weights(np.ones((1, clusters)), self.cluster[rows])
                unit._tables[id(part)] = (part, _frozen(tables[code, :, :width]))
                found.groups.append((part, unit))
        self._parts[id(values)] = (values, found)
        return found

    def _groups(self, parts: Parts) -> list[tuple[FloatArray, Weights, FloatArray]]:
        """Each group's rows of `rest`, their weights and each row's total weight of them.

        Where the products are exact (whole numbers, as label counts are), every group's
        weighted sums, and the pooled ones, come from one matrix product: exact, they do not
        depend on the order in which a product adds its terms."""
        rest, tables = parts.rest, parts.tables
        assert tables is not None
        clusters, width = tables.shape[1], rest.shape[1]
        exact = exact_product(self.whole(), tables)
        drawn = None
        if exact:  # so it may leave out the clusters never drawn or with no item (other folds')
            flat = tables.transpose(1, 0, 2).reshape(clusters, -1)
            held = np.asarray(flat.any(axis=1) & drawn_clusters(self.counts))
            # (every cluster held, as with a model that answered every conversation: no copy)
            drawn = self.product(flat, None if held.all() else held)
        found = []
        for code, (part, unit) in enumerate(parts.groups):
            inside = unit._alike(self.counts)
            inside._whole.update(self._whole)  # the same counts
            if drawn is None:
                total = inside.sum(np.ones((len(part), 1)))[:, 0]
            else:
                block = drawn[:, code * (width + 1) : (code + 1) * (width + 1)]
                inside._sums[id(part)] = (part, _frozen(block[:, :width]))
                total = block[:, width].copy()
            found.append((part, inside, total))
        if drawn is not None:  # the pooled sums: the groups' added, exactly
            self._tables[id(rest)] = (rest, _frozen(tables[:, :, :width].sum(axis=0)))
            pooled = sum(inside._sums[id(part)][1] for part, inside, _ in found)
            self._sums[id(rest)] = (rest, _frozen(np.asarray(pooled)))
        return found

    def whole(self) -> tuple[bool, float]:
        """Whether every count is a whole number, and the largest row total (kept: the counts
        are never changed)."""
        found = self._whole.get("counts")
        if found is None:
            many = self.rows >= SINGLE_ROWS  # (the resamples' counts: known once for all)
            found = self._whole["counts"] = _known(self.counts)[0] if many else _whole(self.counts)
        return found

    def grouped(self, group: IntArray, groups: int) -> FloatArray:
        """The (B, groups) total weight of each group of items (items with equal values, say):
        a rank statistic needs only these, not every item's weight."""
        flat = self.cluster * groups + group
        table = np.bincount(flat, minlength=self.counts.shape[1] * groups).astype(np.float64)
        return self.product(table.reshape(-1, groups))

    def product(self, table: FloatArray, held: BoolArray | None = None) -> FloatArray:
        """`counts @ table` (`counts_product`)."""
        return counts_product(self.counts, table, held)


@dataclass(frozen=True)
class Split:
    """Values split by a group code in their column 0 (`Weights.split`): the other columns
    of every item (`rest`, read over the groups pooled) and, per group in the codes' sorted
    order, its rows of them, weights of those rows (the same counts) and each row's total
    weight of them; one group, every item under the weights split, with no totals (empty),
    where every item is in one."""

    rest: FloatArray
    groups: list[tuple[FloatArray, Weights, FloatArray]]


@dataclass(frozen=True)
class Parts:
    """What splitting values by a group code in their column 0 finds whatever the counts:
    the other columns (`rest`), and where the codes differ, the (groups, clusters, k + 1)
    per-cluster sums of `rest` and of ones, and each group's rows of `rest` with their unit
    weights (`Weights.unit`), whose per-cluster sums and kept statistics the group's weights
    under any counts share."""

    rest: FloatArray
    tables: FloatArray | None
    groups: list[tuple[FloatArray, Weights]]


def counts_product(
    counts: FloatArray, table: FloatArray, held: BoolArray | None = None
) -> FloatArray:
    """`counts @ table` (over the `held` clusters alone, where given: the others' terms being
    0). In single precision where that is exact: whole numbers whose every partial sum is below
    2**24 (`SINGLE_EXACT`), as resample counts times label or item counts are; exact, the
    numbers are the same as in double precision, in half the time."""
    single = None
    if len(counts) >= SINGLE_ROWS:
        known, single = _known(counts)
        single = single if exact_product(known, table, SINGLE_EXACT) else None
    if single is None:
        found: FloatArray = (counts if held is None else counts[:, held]) @ (
            table if held is None else table[held]
        )
        return found
    narrow = table.astype(np.float32)
    if held is not None:
        single, narrow = single[:, held], narrow[held]
    return (single @ narrow).astype(np.float64)


def exact_product(counts: tuple[bool, float], table: FloatArray, limit: float = 2.0**53) -> bool:
    """Whether a product of counts (`Weights.whole`: whether they are whole numbers, and their
    largest row total) with `table` is exact in floating point, in whatever order its terms are
    added: whole numbers, whose every partial sum is below 2**53 (`limit`, where given: 2**24
    in single precision)."""
    whole, largest = counts
    if not (whole and np.array_equal(table, np.trunc(table))):
        return False
    return largest * float(np.abs(table).max(initial=0.0)) < limit


def _whole(counts: FloatArray) -> tuple[bool, float]:
    """Whether every count is a whole number, and the largest row total."""
    whole = bool(np.array_equal(counts, np.trunc(counts)))
    return whole, float(np.abs(counts).sum(axis=1).max(initial=0.0))


Single = npt.NDArray[np.float32]
# What counts are (`_whole`) and their single-precision copy, kept by identity while the counts
# live: the resamples' counts are one array, never changed, shared by every model's weights
# and by the weights made from them (of a metric's rows, a subset of the items), and reading
# them costs as much as a product.
Known = tuple[tuple[bool, float], Single | None]
_KNOWN: dict[int, tuple[weakref.ref[FloatArray], Known]] = {}
# Which clusters the resamples draw (`drawn_clusters`), kept the same way.
_DRAWN: dict[int, tuple[weakref.ref[FloatArray], BoolArray]] = {}
T = TypeVar("T")


def _recalled(kept: dict[int, tuple[weakref.ref[FloatArray], T]], counts: FloatArray) -> T | None:
    """What `kept` holds for these very counts (None if nothing, or for other counts that
    reuse a freed array's id)."""
    found = kept.get(id(counts))
    return found[1] if found is not None and found[0]() is counts else None


def _remember(
    kept: dict[int, tuple[weakref.ref[FloatArray], T]], counts: FloatArray, value: T
) -> None:
    """Keep `value` for these counts while they live."""
    key = id(counts)
    kept[key] = (weakref.ref(counts, lambda _: kept.pop(key, None)), value)


def _known(counts: FloatArray) -> Known:
    """`_whole` of the counts, and their single-precision copy (None where not whole)."""
    found = _recalled(_KNOWN, counts)
    if found is not None:
        return found
    whole = _whole(counts)
    # (with a row total of 1 or more, an exact product's table is below the limit too)
    single = counts.astype(np.float32) if whole[0] and 1 <= whole[1] < SINGLE_EXACT else None
    _remember(_KNOWN, counts, (whole, single))
    return whole, single


def drawn_clusters(counts: FloatArray) -> BoolArray:
    """Whether some row of the counts draws each cluster (read-only). The resamples' counts
    are read once: every model's split values ask (`Weights._groups`), and reading them costs
    a tenth of a millisecond each time."""
    if len(counts) < SINGLE_ROWS:
        return np.asarray(counts.any(axis=0))
    drawn = _recalled(_DRAWN, counts)
    if drawn is None:
        drawn = np.asarray(counts.any(axis=0))
        drawn.flags.writeable = False
        _remember(_DRAWN, counts, drawn)
    return drawn


def _frozen(array: FloatArray) -> FloatArray:
    """A read-only contiguous copy, as the sums `Weights` keeps are."""
    copy = np.ascontiguousarray(array).copy()
    copy.flags.writeable = False
    return copy


def none_if_nan(value: float) -> float | None:
    """A number for JSON: None where it is undefined (NaN)."""
    return None if np.isnan(value) else float(value)


def ridge_logistic(x: FloatArray, y: FloatArray, ridge: float) -> FloatArray:
    """Weights of a logistic regression of y (in [0, 1], so a tie may count 0.5) on the columns
    of x (add a column of ones for an intercept), by Newton's method (IRLS), with the penalty
    ridge * |beta|^2 / 2: it keeps the weights finite where the outcomes separate (every
    verdict one way, a classifier's train pairs all one way)."""
    beta = np.zeros(x.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -LOGIT_CLIP, LOGIT_CLIP)))
        gradient = x.T @ (y - p) - ridge * beta
        curvature = (x * (p * (1 - p))[:, None]).T @ x + ridge * np.eye(x.shape[1])
        step = np.linalg.solve(curvature, gradient)
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return beta
