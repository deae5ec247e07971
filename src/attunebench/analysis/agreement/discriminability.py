"""How well does a task tell the models under test apart? One definition, as a number.

A two-way random-effects ANOVA on the (conversation x model) table of mean scores gives the
between-model variance of true scores var(a) and the per-conversation noise var(e) (the
conversation effect cancels: the design is paired); snr = var(a) / var(e), and a paired test
needs 17.25 / snr conversations to separate the median pair of models at 80% power. Figures
are per conversation (`snr_per_item` per item). Separability (Li et al. 2024,
arXiv:2406.11939), the share of pairs whose intervals do not overlap, is kept beside it.
docs/report.md ("How well does a task tell models apart?") gives the derivation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from attunebench.analysis.agreement.reliability import ConversationTable
from attunebench.analysis.bootstrap import (
    ClusterBootstrap,
    interval_with_infinity,
    pair_reason,
    percentile_interval,
)
from attunebench.analysis.frame import FloatArray
from attunebench.analysis.schema import Discriminability, Estimate, Ratio
from attunebench.analysis.scores import MetricScores
from attunebench.stats import safe_ratio

NEEDED_CONSTANT = (1.959964 + 0.841621) ** 2 * 2 / (2 * 0.6745**2)  # 17.25 (docs/report.md)


def _means(table: ConversationTable) -> tuple[np.ndarray, FloatArray]:
    """The conversations where every model has items, and their (C, M) mean scores."""
    complete = np.asarray((table.counts > 0).all(axis=1))
    means = safe_ratio(table.sums[complete], table.counts[complete])
    return complete, means


_ROUNDING = 1e-12


def snr_of(means: FloatArray, weights: FloatArray) -> FloatArray:
    """var(a) / var(e) from the (C, M) table, for each row of (B, C) conversation weights."""
    models = means.shape[1]
    total = weights.sum(axis=1)
    centred = means - means.mean(axis=1, keepdims=True)  # the conversation effect removed
    gaps = safe_ratio(weights @ centred, total[:, None])  # (B, M): each model's mean gap
    between = total * (gaps**2).sum(axis=1) / (models - 1)
    within = (weights @ (centred**2)).sum(axis=1) - total * (gaps**2).sum(axis=1)
    error = safe_ratio(within, (models - 1) * (total - 1))
    # Residual variation at the level of rounding (scores alike up to a constant on every
    # conversation) is none: dividing by it would give any number at all.
    error[error <= _ROUNDING * max(float(np.mean(means**2)), 1.0)] = 0.0
    return safe_ratio((between - error) / total, error)


def needed(snr: float) -> int | None:
    return None if not np.isfinite(snr) or snr <= 0 else max(2, math.ceil(NEEDED_CONSTANT / snr))


def _separability(scores: MetricScores, usable: np.ndarray) -> tuple[float | None, ...]:
    low, high, point = scores.low[usable], scores.high[usable], scores.point[usable]
    if len(usable) < 2 or np.isnan(low).any():
        return None, None, None, None
    pairs = list(combinations(range(len(usable)), 2))
    apart = sum(1 for i, j in pairs if high[i] < low[j] or high[j] < low[i])
    spread, width = float(point.max() - point.min()), float(np.mean(high - low))
    return apart / len(pairs), spread, width, (spread / width if width > 0 else None)


def task_discriminability(
    scores: MetricScores,
    table: ConversationTable,
    model_names: Sequence[str],
    subjects: Sequence[int],
    bootstrap: ClusterBootstrap,
    too_few: str | None,
) -> tuple[Discriminability, FloatArray]:
    """One task's figures, and its resampled snr (for the ratios)."""
    usable = np.array([m for m in sorted(subjects) if np.isfinite(scores.point[m])], dtype=int)
    models = [model_names[int(m)] for m in usable]
    complete, means = _means(table)
    drawn = np.full(bootstrap.resamples, np.nan)
    base = dict(task=scores.task, variant=scores.variant, metric=scores.metric, models=models)
    point = float("nan")
    if len(models) >= 2 and means.shape[0] >= 2:
        point = float(snr_of(means, np.ones((1, means.shape[0])))[0])
    if not np.isfinite(point):
        reason = _no_snr_reason(len(models), means.shape[0])
        return Discriminability(**base, snr=Estimate(reason=reason), reason=reason), drawn
    drawn = snr_of(means, bootstrap.counts[:, complete])
    low, high = percentile_interval(drawn[:, None], bootstrap.confidence)
    per_conversation = float(table.counts[complete].mean(axis=1).mean())
    snr = Estimate.of(point, low[0], high[0], few=too_few)
    separability, spread, width, over = _separability(scores, usable)
    if too_few is not None:
        separability = over = width = None
    item_snr = point / per_conversation if per_conversation > 0 else None
    conversations = needed(point)
    entry = Discriminability(
        **base,
        snr=snr,
        conversations_needed=conversations,
        items_per_conversation=per_conversation,
        snr_per_item=item_snr,
        items_needed=None if conversations is None else math.ceil(conversations * per_conversation),
        separability=separability,
        spread=spread,
        mean_ci_width=width,
        spread_over_noise=over,
        reason=None if point > 0 else "the models' true scores do not differ detectably",
    )
    return entry, drawn


def _no_snr_reason(models: int, conversations: int) -> str:
    if models < 2 or conversations < 2:
        return f"fewer than 2 models under test ({models}) or 2 conversations"
    # 0 / 0: every model scores alike on every conversation, so there is no noise to weigh the
    # models' differences against
    return (
        "no residual variation (each model scores the same on every conversation, up to"
        " a constant): no signal-to-noise ratio"
    )


def ratios(
    entries: Sequence[Discriminability],
    drawn: Mapping[str, FloatArray],
    confidence: float,
    too_few: Mapping[str, str | None],
) -> list[Ratio]:
    """For every pair of tasks: the conversations task a needs over those task b needs (`too_few`:
    per task, why it rests on too few conversations for an interval)."""
    return [
        _ratio(a, b, drawn, confidence, pair_reason(a.task, b.task, too_few))
        for a, b in combinations(sorted(entries, key=lambda e: e.task), 2)
    ]


def _ratio(
    a: Discriminability,
    b: Discriminability,
    drawn: Mapping[str, FloatArray],
    confidence: float,
    few: str | None,
) -> Ratio:
    """The conversations task a needs over those task b needs, with its interval (none where
    `few` says why a task rests on too few conversations) and the same per item."""
    sa, sb = a.snr.value, b.snr.value
    if sa is None or sb is None or sa <= 0 or sb <= 0:
        why = "a task's models do not differ detectably (snr <= 0), or it has no snr"
        statement = f"{a.task} against {b.task}: no ratio ({why})"
        return Ratio(task_a=a.task, task_b=b.task, statement=statement, reason=why)
    value = sb / sa  # needed_a / needed_b = snr_b / snr_a
    samples = _resampled_ratio(drawn[a.task], drawn[b.task])
    low, high = interval_with_infinity(samples, confidence)
    low_b, high_b = (end if np.isfinite(end) else np.nan for end in (low, high))
    found = Estimate.of(value, low_b, high_b, _unbounded(a.task, samples, high, confidence), few)
    low_v, high_v = found.ci_low, found.ci_high
    shown = f"[{_num(low_v)}, {_num(high_v)}]" if few is None else f"({few})"
    ka, kb = a.items_per_conversation or 0.0, b.items_per_conversation or 0.0
    # items needed = conversations needed x items per conversation
    scale = ka / kb if ka > 0 and kb > 0 else np.nan
    per_item, item_low, item_high = (
        None if v is None or np.isnan(scale) else v * scale for v in (value, low_v, high_v)
    )
    item_shown = f"[{_num(item_low)}, {_num(item_high)}]" if few is None else ""
    statement = (
        f"{a.task} needs {value:.2f}x {shown} the conversations {b.task} needs to "
        f"separate these models, with {ka:.1f} against {kb:.1f} items per conversation"
    )
    if per_item is not None:
        statement += f"; per item, {per_item:.2f}x {item_shown}".rstrip()
    return Ratio(
        **found.model_dump(),
        task_a=a.task,
        task_b=b.task,
        items_per_conversation_a=a.items_per_conversation,
        items_per_conversation_b=b.items_per_conversation,
        per_item=per_item,
        per_item_ci_low=item_low,
        per_item_ci_high=item_high,
        statement=statement,
    )


def _resampled_ratio(drawn_a: FloatArray, drawn_b: FloatArray) -> FloatArray:
    """snr_b / snr_a in each resample: infinite or 0 where a task's models do not differ, so the
    interval opens on that side rather than quietly narrowing."""
    on_a, on_b = drawn_a > 0, drawn_b > 0
    return np.select(
        [on_a & on_b, on_b & ~on_a, on_a & ~on_b],
        [safe_ratio(drawn_b, drawn_a), np.inf, 0.0],
        np.nan,
    )


def _unbounded(task: str, samples: FloatArray, high: float, confidence: float) -> str | None:
    """Why the upper end of a ratio's interval is unbounded."""
    if np.isfinite(high):
        return None
    defined = samples[~np.isnan(samples)]
    count = int(np.isinf(defined).sum())
    tail = 100 * (1 - confidence) / 2
    return (
        f"in {count} of {len(defined)} resamples ({100 * count / len(defined):.1f}%, more than "
        f"the {tail:g}% tail) {task}'s models do not differ (snr <= 0): the interval is open above"
    )


def _num(value: float | None) -> str:
    return "unbounded" if value is None else f"{value:.2f}"


def ranked(entries: Sequence[Discriminability]) -> list[Discriminability]:
    """Best-separating first (by snr), with `rank` set (uncomputable ones last, unranked)."""
    computed = [e for e in entries if e.snr.value is not None]
    computed.sort(key=lambda e: (-(e.snr.value or 0.0), e.task))
    out = [e.model_copy(update={"rank": position}) for position, e in enumerate(computed, 1)]
    return out + sorted((e for e in entries if e.snr.value is None), key=lambda e: e.task)
