"""How well does a task tell models apart? One definition for every task.

- separability: the share of model pairs whose intervals do not overlap (Li et al. 2024,
  "From Crowdsourced Data to High-Quality Benchmarks: Arena-Hard and BenchBuilder",
  arXiv:2406.11939, which defines it for a whole benchmark; here it is per task);
- spread over noise: the range of the models' scores divided by the mean interval width, a
  signal-to-noise ratio on the task's own scale (scale-free, so tasks compare).

Tasks are ranked by separability, ties broken by spread over noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from attunebench.analysis.schema import Discriminability
from attunebench.analysis.scores import MetricScores


def _null(scores: MetricScores, models: list[str], reason: str) -> Discriminability:
    return Discriminability(
        task=scores.task,
        variant=scores.variant,
        metric=scores.metric,
        models=models,
        separability=None,
        spread=None,
        mean_ci_width=None,
        spread_over_noise=None,
        rank=None,
        reason=reason,
    )


def discriminability(scores: MetricScores, model_names: Sequence[str]) -> Discriminability:
    """Separability and spread over noise of one task's headline scores."""
    usable = np.flatnonzero(
        ~np.isnan(scores.point) & ~np.isnan(scores.low) & ~np.isnan(scores.high)
    )
    models = [model_names[int(m)] for m in usable]
    if len(usable) < 2:
        return _null(scores, models, f"fewer than 2 models with intervals ({len(usable)})")
    low, high, point = scores.low[usable], scores.high[usable], scores.point[usable]
    pairs = list(combinations(range(len(usable)), 2))
    apart = sum(1 for i, j in pairs if high[i] < low[j] or high[j] < low[i])
    spread = float(point.max() - point.min())
    width = float(np.mean(high - low))
    return Discriminability(
        task=scores.task,
        variant=scores.variant,
        metric=scores.metric,
        models=models,
        separability=apart / len(pairs),
        spread=spread,
        mean_ci_width=width,
        spread_over_noise=spread / width if width > 0 else None,
        rank=None,
        reason=None if width > 0 else "every interval has zero width",
    )


def ranked(entries: Sequence[Discriminability]) -> list[Discriminability]:
    """Entries ordered best-separating first, with `rank` set (uncomputable ones last, unranked)."""
    computed = [e for e in entries if e.separability is not None]
    computed.sort(key=lambda e: (-(e.separability or 0.0), -(e.spread_over_noise or 0.0), e.task))
    out = [e.model_copy(update={"rank": position}) for position, e in enumerate(computed, 1)]
    return out + sorted((e for e in entries if e.separability is None), key=lambda e: e.task)
