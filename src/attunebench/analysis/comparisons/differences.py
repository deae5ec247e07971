"""Two models' headlines compared on the same items: model a's minus model b's, with an interval.

On the report's cell of a task (the items every model under test answered), each resample
draws clusters once for both models, so the interval is the paired one: narrower than two
independent bootstraps wherever the models' scores go together. `power` simulates studies of
this same pair (`HeadlinePair`); every pair of a task is resampled with the same draws, so
a - b and b - c add up to a - c in every resample.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from attunebench.analysis.bootstrap import Minimum, percentile_interval
from attunebench.analysis.cells import Cell, build_cell
from attunebench.analysis.frame import FloatArray, Frame, IntArray, headline_variant
from attunebench.analysis.loading import Runs
from attunebench.analysis.provenance import Roster
from attunebench.analysis.schema import ModelDifference
from attunebench.analysis.scores import cell_headline, headline_metric, metric_values
from attunebench.stats import Weights, none_if_nan
from attunebench.tasks.helpers.metrics import Found, Metric


@dataclass(frozen=True)
class HeadlinePair:
    """Two models' values of the headline metric on the report's cell, read once: each model's
    values and the cluster (0 to `clusters` - 1) of each record they were read from."""

    metric: Metric
    values: tuple[Found, Found]
    owners: tuple[IntArray, IntArray]  # each model's records: its cluster
    clusters: int
    items: int  # items of model a

    def each(self, counts: FloatArray) -> tuple[FloatArray, FloatArray]:
        """a's headline and b's under each row of `counts` (rows x clusters)."""
        a, b = (
            self.metric.weighted(found, Weights(counts, owners))
            for found, owners in zip(self.values, self.owners, strict=True)
        )
        return a, b

    def differences(self, counts: FloatArray) -> FloatArray:
        """a's headline minus b's under each row of `counts` (rows x clusters)."""
        a, b = self.each(counts)
        return a - b

    def point(self) -> float:
        """The difference with every cluster once, as the report's value."""
        return float(self.differences(np.ones((1, self.clusters)))[0])

    def resampled(
        self,
        studies: FloatArray,
        size: int,
        resamples: int,
        confidence: float,
        rng: np.random.Generator,
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Each study's (a row of cluster counts, `size` in all) differences under `resamples`
        paired resamples of it (resamples x studies), and their expanded percentile interval:
        the report's interval of a run of the study's conversations."""
        drawn = rng.multinomial(size, studies / size, size=(resamples, len(studies)))
        counts = drawn.reshape(-1, self.clusters).astype(np.float64)
        found = self.differences(counts).reshape(resamples, len(studies))
        low, high = percentile_interval(found, confidence, size)
        return found, low, high


def report_cell(runs: Runs, frame: Frame, task: str) -> Cell | None:
    """The cell the report compares models on for this task (its headline variant, the items
    every model under test answered); None for a task with only person-hidden twins."""
    variant = headline_variant(frame.task_variants(task))
    if variant is None:
        return None
    roster = Roster.of(runs)
    subjects = [m for m, name in enumerate(frame.models) if roster.is_subject(name)]
    return build_cell(frame, task, variant, False, subjects, runs.made_with(task))


def headline_pair(
    frame: Frame, cell: Cell, a: str, b: str, cluster_of: IntArray | None = None
) -> HeadlinePair | None:
    """The pair's headline on the cell, clustered by conversation (or `cluster_of`); None where a
    model has no record there or the cell no headline metric."""
    metric = cell_headline(cell, frame)
    found = [frame.models.index(m) for m in (a, b) if m in frame.models]
    rows = [cell.rows(frame, m) for m in found]
    if metric is None or len(rows) < 2 or not all(len(r) for r in rows):
        return None
    keys = [frame.conversation[r] if cluster_of is None else cluster_of[frame.conversation[r]]
            for r in rows]  # fmt: skip
    clusters = np.unique(np.concatenate(keys))
    owners = [np.searchsorted(clusters, k) for k in keys]
    values = [metric_values(frame, cell, metric, r) for r in rows]
    return HeadlinePair(
        metric, (values[0], values[1]), (owners[0], owners[1]), len(clusters), len(rows[0])
    )


def resampled_difference(
    pair: HeadlinePair, resamples: int, confidence: float, rng: np.random.Generator
) -> tuple[float, FloatArray, float, float]:
    """The pair's difference, its `resamples` paired cluster resamples and their interval."""
    ones = np.ones((1, pair.clusters))
    drawn, low, high = pair.resampled(ones, pair.clusters, resamples, confidence, rng)
    return pair.point(), drawn[:, 0], float(low[0]), float(high[0])


@dataclass(frozen=True)
class Resampling:
    """How the report resamples: its seed, resamples, confidence and fewest clusters."""

    seed: int
    resamples: int
    confidence: float
    minimum: Minimum


def model_differences(
    frame: Frame,
    cells: Mapping[str, Cell],
    subjects: Collection[str],
    pairs: Sequence[tuple[str, str]],
    resampling: Resampling,
) -> list[ModelDifference]:
    """Per task (`cells`: each task's headline cell) and asked pair (a, b): a's minus b's."""
    return [
        _difference(frame, cell, pair, subjects, resampling)
        for _, cell in sorted(cells.items())
        for pair in pairs
    ]


def _difference(
    frame: Frame,
    cell: Cell,
    names: tuple[str, str],
    subjects: Collection[str],
    resampling: Resampling,
) -> ModelDifference:
    """One pair on one task's cell: the difference with its interval, or why there is none."""
    metric = headline_metric(cell)
    base = ModelDifference(
        task=cell.task, metric=metric, variant=cell.variant, a=names[0], b=names[1]
    )
    present = {frame.models[m] for m in np.unique(frame.model[cell.mask])}
    missing = next((n for n in names if n not in subjects or n not in present), None)
    if missing is not None:
        return base.model_copy(
            update={"reason": f"not a model under test with a headline here: {missing}"}
        )
    pair = headline_pair(frame, cell, *names, resampling.minimum.cluster_of)
    if pair is None:
        return base.model_copy(update={"reason": f"no {metric} on these items"})
    a, b = (float(side[0]) for side in pair.each(np.ones((1, pair.clusters))))
    sides = {"a_value": none_if_nan(a), "b_value": none_if_nan(b)}  # null, never NaN, in JSON
    found = base.model_copy(update={**sides, "n": pair.items, "n_clusters": pair.clusters})
    if np.isnan(a) or np.isnan(b):
        return found.model_copy(update={"reason": f"{metric} is undefined on these items"})
    found = found.model_copy(update={"value": a - b})
    too_few = resampling.minimum.reason(pair.clusters)
    if too_few is not None:
        return found.model_copy(update={"reason": too_few})
    rng = np.random.default_rng(resampling.seed)  # the same draws for every pair of the task
    _, _, low, high = resampled_difference(pair, resampling.resamples, resampling.confidence, rng)
    if np.isnan(low) or np.isnan(high):
        return found.model_copy(update={"reason": "undefined in every resample"})
    return found.model_copy(update={"ci_low": low, "ci_high": high})
