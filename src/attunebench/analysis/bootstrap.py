"""Cluster bootstrap: percentile intervals that resample whole conversations (or participants).

Turns of one conversation are not independent, so the resampled unit is the cluster: each
resample draws as many clusters as there are, with replacement, and every item of a drawn
cluster comes along (Field & Welsh 2007, "Bootstrapping clustered data", JRSS-B 69(3); the
percentile interval is Efron & Tibshirani 1993, ch. 13).

Item-mean statistics are fully vectorised. A resample is a row of cluster counts (a multinomial
draw), so for a (resamples x clusters) count matrix `W` and per-cluster sums `S`, the resampled
sums of every model and metric at once are the matrix product `W @ S`; a mean is then a ratio
of two such sums. One `ClusterBootstrap` holds one `W` and is shared by every statistic of a
report, so all numbers (and anything computed across tasks, such as rank correlations) see the
same resampled conversations.

A paired comparison of two models (or two context modes) on the same items is the cluster
bootstrap of the per-item differences.

Every task metric is evaluated on the same count matrix through `weights` (see
`tasks.helpers.metrics`): a resample's counts weight each item by how often its cluster was drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from scipy import stats

from attunebench.analysis.frame import BoolArray, FloatArray, IntArray
from attunebench.stats import Weights, counts_product, group_sums, safe_ratio

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95

# A statistic of summed per-item columns: (..., k) sums -> (...) values, for the plain sums and
# for every resample's at once.
Finish = Callable[[FloatArray], FloatArray]


def ratio(sums: FloatArray) -> FloatArray:
    """Column 0 over column 1 (NaN where column 1 is 0): a mean from its (sum, count)."""
    return safe_ratio(sums[..., 0], sums[..., 1])


def resample_counts(n_clusters: int, resamples: int, rng: np.random.Generator) -> IntArray:
    """(resamples x n_clusters) counts: how often each cluster is drawn in each resample."""
    if n_clusters < 1:
        raise ValueError("cannot resample zero clusters")
    probabilities = np.full(n_clusters, 1.0 / n_clusters)
    counts: IntArray = rng.multinomial(n_clusters, probabilities, size=resamples)
    return counts


@cache  # scipy's t and normal quantiles cost ~0.1 ms a call; an analysis asks for few sizes
def expanded_confidence(confidence: float, clusters: int) -> float:
    """The percentile interval's level that corrects its small-sample narrowness.

    A percentile interval behaves like mean +- z x (the plug-in standard error), which is too
    narrow with few clusters twice over: the plug-in variance divides by n, not n - 1, and z
    ignores the t distribution's heavier tails. The expanded percentile interval (Hesterberg
    2015, "What teachers should know about the bootstrap", The American Statistician 69(4),
    section 5.3) takes the percentiles at the level whose normal quantile is
    sqrt(n / (n - 1)) x t(n - 1), instead of z: for 95% that is the 96.8% level for 20
    clusters, 98.3% for 10 and 99.8% for 5 (and 95.2% for 200). Asymmetric intervals stay asymmetric
    and a bounded statistic stays in its range. Measured by `planted.studies.coverage`.
    """
    if clusters < 2:
        return confidence
    tail = (1.0 - confidence) / 2.0
    widened = np.sqrt(clusters / (clusters - 1)) * stats.t.ppf(1.0 - tail, clusters - 1)
    return float(1.0 - 2.0 * stats.norm.sf(widened))


def percentile_interval(
    samples: FloatArray,
    confidence: float = DEFAULT_CONFIDENCE,
    clusters: int | IntArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """The percentile interval along axis 0, ignoring undefined (NaN) resamples.

    `clusters` (one number, or one per column) is how many clusters each column's statistic
    rests on; given, the interval is the expanded one (`expanded_confidence`).
    """
    low = np.full(samples.shape[1:], np.nan)
    high = np.full(samples.shape[1:], np.nan)
    if clusters is None:
        levels = np.full(samples.shape[1:], confidence)
    else:
        sizes = np.broadcast_to(np.asarray(clusters, dtype=np.int64), samples.shape[1:])
        by_size = {int(n): expanded_confidence(confidence, int(n)) for n in np.unique(sizes)}
        levels = np.vectorize(by_size.__getitem__, otypes=[np.float64])(sizes)
    for level in np.unique(levels):
        tail = 100.0 * (1.0 - float(level)) / 2.0
        at = levels == level
        _percentiles(samples, at, tail, low, high)
    return low, high


def _percentiles(
    samples: FloatArray, columns: BoolArray, tail: float, low: FloatArray, high: FloatArray
) -> None:
    """Fill `low` and `high` at `columns` with the `tail` and 100 - `tail` percentiles."""
    defined = ~np.isnan(samples)
    # Columns with every resample defined in one vectorised call; nanpercentile goes column by
    # column, and gives the same numbers.
    complete = defined.all(axis=0) & columns
    partial = defined.any(axis=0) & ~defined.all(axis=0) & columns
    for usable, percentile in ((complete, np.percentile), (partial, np.nanpercentile)):
        if usable.any():
            bounds = percentile(samples[:, usable], [tail, 100.0 - tail], axis=0)
            low[usable], high[usable] = bounds[0], bounds[1]


def interval_with_infinity(samples: FloatArray, confidence: float) -> tuple[float, float]:
    """The percentile interval of resampled values of which some may be infinite (NaN ones,
    undefined, are left out; NaN ends when none is defined).

    Numpy's linear interpolation between the order statistics around each quantile, with the
    infinite ones handled rather than turned into NaN (infinity minus infinity, or 0 x
    infinity): between a finite and an infinite neighbour the quantile is infinite unless it
    falls exactly on the finite one. So an end is infinite (unbounded) only when that quantile
    really is.
    """
    defined = np.sort(samples[~np.isnan(samples)])
    if len(defined) == 0:
        return np.nan, np.nan
    tail = 100.0 * (1.0 - confidence) / 2.0
    ends = []
    for q in (tail, 100.0 - tail):
        at = float(np.percentile(np.arange(len(defined), dtype=np.float64), q))  # as numpy
        below, above = defined[int(np.floor(at))], defined[int(np.ceil(at))]
        if at == np.floor(at) or np.isinf(below):  # on an order statistic, or past the finite
            ends.append(float(below))
        elif np.isinf(above):
            ends.append(float(above))
        else:
            ends.append(float(np.percentile(defined, q)))
    return ends[0], ends[1]


def containing(value: float, low: float, high: float) -> tuple[float, float]:
    """A percentile interval extended, where needed, to the estimate it is shown beside.

    The percentile interval of a statistic at the edge of its range lies wholly on one side of
    the estimate: a rank correlation of 1 has no resample above it, and when most resamples
    reorder a few close models the interval can end below 1 ("1.00 [0.86, 0.99]"). BCa would
    correct for that bias, but it is undefined exactly there (every resample below the
    estimate), so the interval is widened to the estimate instead: it never excludes the value
    it qualifies, and it is no narrower than the percentile interval.
    """
    if np.isnan(value):
        return low, high
    return (value if np.isnan(low) else min(low, value)), (
        value if np.isnan(high) else max(high, value)
    )


def jackknife_widened(
    point: float,
    low: float,
    high: float,
    samples: FloatArray,
    leave_one_out: FloatArray,
    within: tuple[float, float],
) -> tuple[float, float]:
    """A percentile interval widened, where needed, to the cluster jackknife's standard error.

    The bootstrap's spread understates the variance of a statistic that a few clusters decide:
    macro-F1 over a label seen in one or two conversations, where a resample either holds that
    conversation as it was or leaves the label out, and never shows it answered otherwise. The
    jackknife's variance estimate, sqrt((n - 1) / n x sum((theta_i - mean)^2)) over the n
    leave-one-cluster-out values, is conservative (Efron & Stein 1981, "The jackknife estimate
    of variance", Annals of Statistics 9(3)). So both arms of the interval, measured from the
    estimate, are stretched by the ratio of the jackknife's standard error to the bootstrap's
    where it exceeds 1: the asymmetry is kept, the interval is never narrowed, and it stays
    `within` the statistic's range. Measured by `planted.f1_studies`.
    """
    if np.isnan(point) or np.isnan(low) or np.isnan(high):
        return low, high
    jack = leave_one_out[~np.isnan(leave_one_out)]
    drawn = samples[~np.isnan(samples)]
    if len(jack) < 2 or len(drawn) < 2:
        return low, high
    spread = float(np.std(drawn))
    jack_se = float(np.sqrt((len(jack) - 1) / len(jack) * np.sum((jack - jack.mean()) ** 2)))
    stretch = max(1.0, jack_se / spread) if spread > 0 else 1.0
    wider_low = min(low, point - stretch * (point - low))
    wider_high = max(high, point + stretch * (high - point))
    return max(wider_low, within[0]), min(wider_high, within[1])


def cluster_sums(
    values: FloatArray,
    clusters: IntArray,
    n_clusters: int,
    groups: IntArray | None = None,
    n_groups: int = 1,
) -> FloatArray:
    """Per-group, per-cluster sums of item statistics: (n_groups, n_clusters, k).

    `values` is (items,) or (items, k); `groups` (e.g. the model of each item) splits the sums.
    """
    table = values.reshape(len(values), -1)
    where = clusters if groups is None else groups * n_clusters + clusters
    return group_sums(where, table, n_groups * n_clusters).reshape(n_groups, n_clusters, -1)


def clusters_in(cluster_of: IntArray, conversations: IntArray) -> int:
    """How many clusters these conversations (codes, one per item) fall in: counted, where
    `np.unique` would sort them."""
    return int(np.count_nonzero(np.bincount(cluster_of[conversations], minlength=1)))


@dataclass(frozen=True)
class ClusterBootstrap:
    """One set of cluster resamples, shared by every statistic of an analysis.

    `cluster_of` maps each conversation code to its cluster: the conversation itself, or the
    participant who held it.
    """

    counts: FloatArray
    cluster_of: IntArray
    confidence: float = DEFAULT_CONFIDENCE
    # What every `Weights` of these counts knows of them (`Weights.whole`), found once.
    _whole: dict[str, tuple[bool, float]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def create(
        cls,
        cluster_of: IntArray,
        resamples: int,
        rng: np.random.Generator,
        confidence: float = DEFAULT_CONFIDENCE,
    ) -> ClusterBootstrap:
        n_clusters = int(cluster_of.max()) + 1 if len(cluster_of) else 0
        counts = resample_counts(n_clusters, resamples, rng).astype(np.float64)
        return cls(counts, cluster_of, confidence)

    @property
    def resamples(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_clusters(self) -> int:
        return int(self.counts.shape[1])

    def sums(
        self,
        values: FloatArray,
        conversations: IntArray,
        groups: IntArray | None = None,
        n_groups: int = 1,
    ) -> FloatArray:
        """Per-group, per-cluster sums of item statistics: (n_groups, n_clusters, k)."""
        clusters = self.cluster_of[conversations]
        return cluster_sums(values, clusters, self.n_clusters, groups, n_groups)

    def weights(self, conversations: IntArray) -> Weights:
        """Every resample's weight for items of these conversations (codes)."""
        return Weights(self.counts, self.cluster_of[conversations], _whole=self._whole)

    def replicate(self, sums: FloatArray) -> FloatArray:
        """Resampled sums (resamples, groups, k) from per-cluster sums (groups, clusters, k)."""
        groups, clusters, k = sums.shape
        flat = sums.transpose(1, 0, 2).reshape(clusters, groups * k)
        return counts_product(self.counts, flat).reshape(self.resamples, groups, k)

    def statistic(
        self,
        values: FloatArray,
        conversations: IntArray,
        finish: Finish,
        groups: IntArray | None = None,
        n_groups: int = 1,
    ) -> tuple[FloatArray, FloatArray]:
        """`finish` of the per-group column sums of `values` (items x k): point (groups,) from
        the plain sums and resampled (resamples, groups) from each resample's cluster counts,
        so one definition gives both."""
        sums = self.sums(values, conversations, groups, n_groups)
        return finish(sums.sum(axis=1)), finish(self.replicate(sums))

    def means(
        self,
        values: FloatArray,
        conversations: IntArray,
        groups: IntArray | None = None,
        n_groups: int = 1,
    ) -> tuple[FloatArray, FloatArray]:
        """Item means per group: point (groups,) and resampled (resamples, groups).

        NaN values are left out of both numerator and denominator.
        """
        defined = ~np.isnan(values)
        stats = np.stack([np.where(defined, values, 0.0), defined.astype(np.float64)], axis=1)
        return self.statistic(stats, conversations, ratio, groups, n_groups)

    def interval(
        self, samples: FloatArray, clusters: int | IntArray | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """The expanded percentile interval of each column (`expanded_confidence`), for
        statistics resting on `clusters` clusters each (default: every cluster of the run)."""
        found = self.n_clusters if clusters is None else clusters
        return percentile_interval(samples, self.confidence, found)


@dataclass(frozen=True)
class Minimum:
    """The fewest clusters (conversations, or participants) an interval or a verdict may rest on.

    With fewer, a cluster bootstrap has next to nothing to resample (one conversation gives
    zero-width intervals), so a number is shown without interval or verdict, with the reason.
    Each number is judged by the clusters its own items fall in, not by the run's: a task seen in
    3 conversations of a 100-conversation run rests on 3.
    """

    count: int
    unit: str
    cluster_of: IntArray

    def clusters(self, conversations: IntArray) -> int:
        """How many clusters these conversations (codes, one per item) fall in."""
        return clusters_in(self.cluster_of, conversations)

    def reason(self, clusters: int, where: str = "") -> str | None:
        """Why no interval and no verdict rests on `clusters` clusters; None when enough."""
        if clusters >= self.count:
            return None
        unit = self.unit if clusters == 1 else f"{self.unit}s"
        fewer = f"fewer than {self.count}"
        return f"only {clusters} {unit}{where} ({fewer}): no interval and no verdict"

    def of(self, conversations: IntArray, where: str = " with scored items") -> str | None:
        return self.reason(self.clusters(conversations), where)


def pair_reason(a: str, b: str, too_few: Mapping[str, str | None]) -> str | None:
    """Why a figure over two tasks gets no interval and no verdict: either task rests on too
    few clusters (`too_few`: per task, the reason; None or absent where it rests on enough)."""
    found = ((task, too_few.get(task)) for task in (a, b))
    return next((f"{task}: {why}" for task, why in found if why is not None), None)


def paired_difference(
    bootstrap: ClusterBootstrap, a: FloatArray, b: FloatArray, conversations: IntArray
) -> tuple[float, float, float]:
    """Mean of `a - b` over paired items with its cluster-bootstrap interval.

    `a[i]` and `b[i]` are two scores of the same item (two models, or two context modes), so
    both are resampled together and the interval reflects the pairing.
    """
    point, boot = bootstrap.means(a - b, conversations)
    clusters = clusters_in(bootstrap.cluster_of, conversations)
    low, high = bootstrap.interval(boot, clusters)
    return float(point[0]), float(low[0]), float(high[0])
