"""Figures of items named by their conversation, each with its interval, on one set of resampled
conversations.

The cluster bootstrap is the analysis's (`analysis.bootstrap`: whole conversations resampled,
expanded percentile intervals; Field & Welsh 2007; Hesterberg 2015), shared by every figure,
so a difference of two figures (a simulator's against the people's, or the crowd's) is read on
the same resamples: the rollouts of a simulator (`comparisons.rollouts`) and every figure of
`simulators validate`. A task's
figure is its own declared metric (`tasks.helpers.metrics`) under the resamples' weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap
from attunebench.analysis.references.predictors import within_folds
from attunebench.analysis.schema import Estimate, NoisyDifference
from attunebench.stats import FloatArray, IntArray, Weights, none_if_nan
from attunebench.tasks.helpers.metrics import Metric

MIN_CLUSTERS = 2  # fewer: a figure has no interval (a bootstrap of one conversation is flat)
Statistic = Callable[[Weights], FloatArray]  # a figure under each row of weights


@dataclass(frozen=True)
class Resampled:
    """A figure's point value and its value in every resample."""

    point: float
    samples: FloatArray
    clusters: int

    def minus(self, other: Resampled) -> Resampled:
        return Resampled(
            self.point - other.point,
            self.samples - other.samples,
            min(self.clusters, other.clusters),
        )


@dataclass(frozen=True)
class Resampler:
    """The shared resamples, and each conversation's cluster."""

    bootstrap: ClusterBootstrap
    codes: dict[str, int]

    @classmethod
    def over(cls, conversation_ids: Sequence[str], resamples: int, seed: int) -> Resampler:
        codes = {cid: i for i, cid in enumerate(dict.fromkeys(conversation_ids))}
        rng = np.random.default_rng(seed)
        bootstrap = ClusterBootstrap.create(np.arange(len(codes), dtype=np.int64), resamples, rng)
        return cls(bootstrap, codes)

    def where(self, conversation_ids: Sequence[str]) -> IntArray:
        return np.array([self.codes[c] for c in conversation_ids], dtype=np.int64)

    def statistic(self, conversation_ids: Sequence[str], of: Statistic) -> Resampled:
        """A statistic of items of these conversations (one id per item, in its order)."""
        codes = self.where(conversation_ids)
        point = of(Weights.ones(len(codes)))[0] if len(codes) else np.nan
        samples = of(self.bootstrap.weights(codes)) if len(codes) else np.full(1, np.nan)
        return Resampled(float(point), samples, int(np.unique(codes).size))

    def metric(
        self, metric: Metric, views: Sequence[Any], folds: IntArray | None = None
    ) -> Resampled:
        """A task's declared metric over views of its records; for guesses cross-fitted by
        conversation, read within each of their `folds` and averaged, as the report reads a
        reference (`analysis.references.predictors.within_folds`, why in
        `tasks.helpers.fitting`)."""
        ids = [view.record.conversation_id for view in views]
        codes = self.where(ids)
        if not views:
            return Resampled(np.nan, np.full(1, np.nan), 0)
        weights = self.bootstrap.weights(codes)
        if folds is None:
            point, samples = metric.evaluate(views, weights)
        else:
            point, samples = within_folds(metric, metric.values(views), weights, folds)
        return Resampled(point, samples, int(np.unique(codes).size))

    def mean(self, values: Sequence[float], conversation_ids: Sequence[str]) -> Resampled:
        """The mean of per-item values, the items clustered by conversation (the analysis's
        `ClusterBootstrap.means`)."""
        codes = self.where(conversation_ids)
        if not len(codes):
            return Resampled(np.nan, np.full(1, np.nan), 0)
        point, samples = self.bootstrap.means(np.asarray(values, dtype=np.float64), codes)
        return Resampled(float(point[0]), samples[:, 0], int(np.unique(codes).size))

    def estimate(self, found: Resampled, reason: str | None = None) -> Estimate:
        """The figure with its expanded percentile interval (none below MIN_CLUSTERS)."""
        if np.isnan(found.point):
            undefined = "undefined on these items (too few, or all alike)"
            return Estimate(
                value=None, reason=reason or (undefined if found.clusters else "no item")
            )
        if found.clusters < MIN_CLUSTERS:
            why = f"only {found.clusters} conversation: no interval"
            return Estimate(value=found.point, reason=why)
        low, high = self.bootstrap.interval(found.samples[:, None], found.clusters)
        return Estimate(value=found.point, ci_low=none_if_nan(low[0]), ci_high=none_if_nan(high[0]))

    def difference(self, found: Resampled, noise: float | None) -> NoisyDifference:
        """A difference with its interval, and whether it is smaller than `noise` (the spread
        of the simulator's figure over rollouts): then it is noise. With no spread (one
        rollout, or rollouts that agree) no difference is."""
        shown = self.estimate(found)
        within = None if shown.value is None or noise is None else abs(shown.value) < noise
        return NoisyDifference(**shown.model_dump(), within_noise=within)
