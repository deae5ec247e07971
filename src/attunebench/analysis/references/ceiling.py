"""The person's own ceiling: how close a headline comes to the best a person's answers allow.

Where people were asked a task's question again later in the session (retest probes), the
task's headline metric on their repeat answers against their first is `self_consistency`, and
each model's `share_of_ceiling` is (score - chance) / (ceiling - chance), every resample's from
that resample's score and ceiling. No share where the ceiling's interval reaches chance (the
ratio is unbounded there); no entry without probes: "not measured", never 1.0. See
docs/report.md ("The people's own ceiling").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import (
    ClusterBootstrap,
    Minimum,
    expanded_confidence,
    interval_with_infinity,
)
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import FloatArray, Frame
from attunebench.analysis.schema import Estimate, SelfConsistency
from attunebench.analysis.scores import MetricScores
from attunebench.data.schema import Conversation
from attunebench.records import ItemRecord
from attunebench.stats import none_if_nan
from attunebench.tasks.base import Task, View, item_record

PERSON = "person/retest"  # what the people's repeat answers are recorded as


@dataclass(frozen=True)
class Ceiling:
    """One task's measured ceiling: its summary entry, resampled values and clusters."""

    entry: SelfConsistency
    samples: FloatArray
    clusters: int


def repeat_views(
    declaration: Task[Any, Any], conversations: list[Conversation]
) -> list[View[Any, Any]]:
    """The people's repeat answers as records of the task, scored by the task against the
    first answers, read back as its typed views (as a model's records are)."""
    return [declaration.scoring.view(r) for r in repeat_records(declaration, conversations, PERSON)]


def repeat_records(
    declaration: Task[Any, Any], conversations: Iterable[Conversation], model: str
) -> list[ItemRecord]:
    """The repeat answers the task reads from the conversations' probes (`Scoring.retests`), as
    `model`'s records, each scored by the task against the first answer."""
    return [
        item_record(
            repeat.item,
            model,
            "ok",
            prediction=repeat.prediction,
            scored=declaration.score(repeat.item, repeat.prediction),
        )
        for repeat in declaration.scoring.retests(conversations)
    ]


def chance_level(frame: Frame, cell: Cell) -> float | None:
    """The task's chance level on the golds of the cell's items (one record read per item)."""
    declaration = cell.declaration
    if declaration is None:
        return None
    rows = np.flatnonzero(cell.mask)
    _, first = np.unique(frame.item[rows], return_index=True)
    golds = [declaration.scoring.view(frame.records[i]).gold for i in rows[np.sort(first)].tolist()]
    return declaration.scoring.chance(golds)


def task_ceiling(
    frame: Frame,
    cell: Cell,
    conversations: Mapping[str, Conversation],
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
) -> Ceiling | None:
    """A task's self-consistency on the probes; None where none re-asks its items."""
    declaration = cell.declaration
    if declaration is None:
        return None
    evaluated = [conversations[c] for c in frame.conversations if c in conversations]
    views = repeat_views(declaration, evaluated)
    if not views:
        return None
    code = {conversation: i for i, conversation in enumerate(frame.conversations)}
    codes = np.array([code[v.record.conversation_id] for v in views], dtype=np.int64)
    metric = declaration.scoring.metric()
    point, samples = metric.evaluate(views, bootstrap.weights(codes))
    clusters = minimum.clusters(codes)
    reason = minimum.of(codes, " with retest probes")
    if np.isnan(point):  # no label or pick the metric can score among the repeats
        reason = "the repeat answers give the metric no value"
    low = high = np.full(1, np.nan)
    if reason is None:
        low, high = bootstrap.interval(samples.reshape(-1, 1), clusters)
    entry = SelfConsistency(
        metric=metric.name,
        value=none_if_nan(point),
        ci_low=none_if_nan(float(low[0])),
        ci_high=none_if_nan(float(high[0])),
        reason=reason,
        chance=chance_level(frame, cell),
        n=len(views),
        n_conversations=int(np.unique(codes).size),
    )
    return Ceiling(entry, samples, clusters)


ABOVE = "above the people's own consistency"


def _no_share(entry: SelfConsistency, chance: float) -> str | None:
    """Why no share of the ceiling is given (None: one is): a ceiling not above chance, or
    one whose interval reaches chance, where the share's denominator may be 0 and the share
    itself unbounded (near a chance-level ceiling it ran 0.5 high at 30 conversations)."""
    top = entry.value
    if top is None or top <= chance:
        shown = "undefined" if top is None else f"{top:.3f}"
        return f"the people's own agreement ({shown}) is not above chance ({chance:.3f})"
    if entry.ci_low is not None and entry.ci_high is not None and entry.ci_low <= chance:
        return (
            f"no share: the interval of the people's own agreement ({top:.3f} "
            f"[{entry.ci_low:.3f}, {entry.ci_high:.3f}]) reaches chance ({chance:.3f}), so "
            "the way from chance to it may be none"
        )
    return None


def share(
    score: float,
    drawn: FloatArray,
    ceiling: Ceiling,
    chance: float,
    level: float | None,
) -> Estimate:
    """(score - chance) / (ceiling - chance), and its percentile interval at `level` (None: no
    interval) over the resamples' own scores and ceilings; above 1 it says so (`ABOVE`)."""
    why = _no_share(ceiling.entry, chance)
    if why is not None:
        return Estimate(value=None, reason=why)
    assert ceiling.entry.value is not None  # `_no_share` saw it above chance
    value = (score - chance) / (ceiling.entry.value - chance)
    above = ABOVE if value > 1.0 else None
    if level is None:
        reasons = [r for r in (above, "too few conversations for an interval") if r]
        return Estimate(value=value, reason="; ".join(reasons))
    gained, spread = drawn - chance, ceiling.samples - chance
    with np.errstate(divide="ignore", invalid="ignore"):
        # A resample whose ceiling is at or below chance leaves the share unbounded.
        ratios = np.where(spread > 0, gained / spread, np.sign(gained) * np.inf)
    ratios[np.isnan(drawn) | np.isnan(spread) | ((spread <= 0) & (gained == 0))] = np.nan
    low, high = interval_with_infinity(ratios, level)
    if not (np.isfinite(low) and np.isfinite(high)):
        reason = "no share: the ceiling's interval reaches chance, so the share has no bound"
        return Estimate(value=None, reason=reason)
    return Estimate(value=value, ci_low=float(low), ci_high=float(high), reason=above)


def model_shares(
    frame: Frame,
    cell: Cell,
    headline: MetricScores,
    ceiling: Ceiling,
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
) -> dict[str, Estimate]:
    """Every model's share of the ceiling on the task's headline; an interval needs `minimum`
    clusters both among the model's items and among the repeats."""
    chance = ceiling.entry.chance
    if chance is None:
        return {}
    out = {}
    for m, model in enumerate(frame.models):
        if np.isnan(headline.point[m]):
            continue
        conversations = frame.conversation[cell.rows(frame, m)]
        enough = minimum.of(conversations) is None and ceiling.entry.ci_low is not None
        clusters = min(minimum.clusters(conversations), ceiling.clusters)
        level = expanded_confidence(bootstrap.confidence, clusters) if enough else None
        point, drawn = float(headline.point[m]), headline.samples[:, m]
        out[model] = share(point, drawn, ceiling, chance, level)
    return out


def ceilings(
    frame: Frame,
    cells: Mapping[tuple[str, str], Cell],
    headlines: Mapping[str, MetricScores],
    conversations: Mapping[str, Conversation],
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
) -> tuple[dict[str, SelfConsistency], dict[str, dict[str, Estimate]]]:
    """`self_consistency` and `share_of_ceiling` for every task with a headline whose items
    people were asked again."""
    consistency, shares = {}, {}
    for task, headline in sorted(headlines.items()):
        cell = cells[task, headline.variant]
        found = task_ceiling(frame, cell, conversations, bootstrap, minimum)
        if found is None:
            continue
        consistency[task] = found.entry
        shares[task] = model_shares(frame, cell, headline, found, bootstrap, minimum)
    return consistency, shares
