"""Two models' headlines compared on the same items: model a's minus model b's, with an interval.

The cross-model cell of a task holds the items every model under test answered, and every
model's headline is computed on them under the same resamples (`MetricScores.samples`), so
the difference of two models' resampled headlines is the paired difference on those items: its
interval (the expanded percentile interval of the per-resample differences, as every interval
here) reflects that both models met the same hard and easy conversations. It is a difference of
headline metrics (macro-F1, an adjusted correlation), not of item means.

Only models under test are compared: a yardstick's row is scored on its own items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap
from attunebench.analysis.schema import ModelDifference, ScoreRow
from attunebench.analysis.scores import MetricScores


def model_differences(
    headlines: Mapping[str, MetricScores],
    rows: Sequence[ScoreRow],
    models: Sequence[str],
    pairs: Sequence[tuple[str, str]],
    bootstrap: ClusterBootstrap,
) -> list[ModelDifference]:
    """Per task and asked pair (a, b): a's headline minus b's on their common items."""
    out = []
    for task, scores in sorted(headlines.items()):
        mine = {r.model: r for r in rows if r.task == task and r.headline and r.subject}
        for a, b in pairs:
            out.append(_difference(scores, (mine.get(a), mine.get(b)), (a, b), models, bootstrap))
    return out


def _difference(
    scores: MetricScores,
    found: tuple[ScoreRow | None, ScoreRow | None],
    pair: tuple[str, str],
    models: Sequence[str],
    bootstrap: ClusterBootstrap,
) -> ModelDifference:
    base = ModelDifference(
        task=scores.task, metric=scores.metric, variant=scores.variant, a=pair[0], b=pair[1]
    )
    left, right = found
    if left is None or right is None:
        missing = pair[0] if left is None else pair[1]
        return base.model_copy(
            update={"reason": f"not a model under test with a headline here: {missing}"}
        )
    if left.value is None or right.value is None:
        return base.model_copy(update={"reason": "a headline is undefined on these items"})
    i, j = models.index(pair[0]), models.index(pair[1])
    value = float(scores.point[i] - scores.point[j])
    found_ = base.model_copy(update={"a_value": left.value, "b_value": right.value, "value": value})
    too_few = left.reason or right.reason
    if too_few is not None:
        return found_.model_copy(update={"reason": too_few})
    drawn = (scores.samples[:, i] - scores.samples[:, j])[:, None]
    low, high = bootstrap.interval(drawn, left.n_conversations)
    if np.isnan(low[0]) or np.isnan(high[0]):
        return found_.model_copy(update={"reason": "undefined in every resample"})
    return found_.model_copy(update={"ci_low": float(low[0]), "ci_high": float(high[0])})
