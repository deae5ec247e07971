"""Scores by subgroup (participant traits, topics, labels, source fields), and model x subgroup
interactions.

A model under test's level is compared with the rest by a cluster-robust Welch test (Liang &
Zeger 1986; Welch 1947): a parametric p-value has no floor, where a permutation test's 1/(P + 1)
over hundreds of comparisons left nothing significant. Yardsticks are shown, never tested; the
p-values are Holm-adjusted together. The interaction test shuffles levels across conversations;
rare levels are pooled into "other". docs/report.md ("The sections") says more.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.breakdowns.diagnostics import ScoredItems, binned_scores
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import FloatArray, Frame, IntArray
from attunebench.analysis.multiplicity import holm
from attunebench.analysis.schema import GroupScore, Interaction
from attunebench.data.schema import Conversation
from attunebench.stats import safe_ratio

DEFAULT_MIN_CONVERSATIONS = 10
DEFAULT_PERMUTATIONS = 2000
MAX_LEVELS = 30  # a free-text field with more levels is no subgroup to compare
YARDSTICK = "yardstick: not tested"
OTHER = "other"


# Per row of level codes (a shuffle), each level's conversations as a row of 0s and 1s (rows
# x levels, conversations), and each level's size (rows, levels).
Members = tuple[FloatArray, FloatArray]


@dataclass(frozen=True)
class Field:
    """A conversation-level field: its levels, each conversation's level code (-1: none), the
    labelled conversations, and the level codes shuffled across them (P, labelled)."""

    name: str
    levels: tuple[str, ...]
    code: IntArray
    labelled: IntArray
    shuffled: IntArray
    # Per pooling of its levels (`pooled`'s recode, as bytes), the shuffles' `memberships`:
    # they depend on nothing else, and a summary's cells mostly pool a field alike.
    _members: dict[bytes, Members] = dataclasses.field(
        default_factory=dict, repr=False, compare=False
    )

    def pooled_members(self, recode: IntArray, levels: int) -> Members:
        """The shuffles' `memberships` of the `levels` tested once `recode` pools the levels."""
        key = recode.tobytes()
        found = self._members.get(key)
        if found is None:
            found = self._members[key] = memberships(recode[self.shuffled], levels)
            for shared in found:  # read by every cell that pools the field alike
                shared.flags.writeable = False
        return found


def fields(
    frame: Frame,
    conversations: Mapping[str, Conversation],
    permutations: int,
    rng: np.random.Generator,
) -> list[Field]:
    """Participant traits and source name and kind, where they have at least two levels."""
    found: dict[str, dict[str, str]] = defaultdict(dict)
    for cid in frame.conversations:
        conversation = conversations.get(cid)
        if conversation is None:
            continue
        if conversation.participant is not None:
            for trait, level in conversation.participant.traits.items():
                found[f"participant.{trait}"][cid] = level
        context = conversation.context
        for name, given in (("topic", context.topic), ("emotion", context.emotion)):
            if given:
                found[f"context.{name}"][cid] = given
        for label, level in context.labels.items():
            found[f"context.{label}"][cid] = level
        found["source.name"][cid] = conversation.source.name
        found["source.kind"][cid] = conversation.source.kind
    out = []
    for name, level_of in sorted(found.items()):
        levels = tuple(sorted(set(level_of.values())))
        if not 2 <= len(levels) <= MAX_LEVELS:
            continue
        index = {level: i for i, level in enumerate(levels)}
        code = np.array([index.get(level_of.get(c, ""), -1) for c in frame.conversations])
        labelled = np.flatnonzero(code >= 0)
        shuffled = rng.permuted(np.tile(code[labelled], (permutations, 1)), axis=1)
        out.append(Field(name, levels, code, labelled, shuffled.astype(np.int16)))
    return out


def welch_p_values(field: Field, sums: FloatArray, counts: FloatArray) -> FloatArray:
    """p per (level, model) for "the level's mean equals the other levels'" (cluster-robust Welch);
    `sums` and `counts` per (conversation, model)."""
    s, n = sums[field.labelled], counts[field.labelled]
    labels = field.code[field.labelled]
    out = np.full((len(field.levels), s.shape[1]), np.nan)
    for level in range(len(field.levels)):
        inside = labels == level
        mean_in, var_in, g_in = _ratio_variance(s[inside], n[inside])
        mean_out, var_out, g_out = _ratio_variance(s[~inside], n[~inside])
        difference, variance = mean_in - mean_out, var_in + var_out
        df = safe_ratio(
            variance**2, safe_ratio(var_in**2, g_in - 1.0) + safe_ratio(var_out**2, g_out - 1.0)
        )
        t = np.abs(difference) / np.sqrt(np.where(variance > 0, variance, np.nan))
        p = 2.0 * stats.t.sf(t, df)
        # no spread on either side: any difference at all is certain, none is no evidence
        p = np.where(variance > 0, p, np.where(np.abs(difference) > 0, 0.0, 1.0))
        out[level] = np.where(np.isnan(difference) | (g_in < 2) | (g_out < 2), np.nan, p)
    return out


def _ratio_variance(s: FloatArray, n: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per model: the ratio mean, its cluster-robust variance and the clusters with items."""
    clusters = (n > 0).sum(axis=0).astype(np.float64)
    total = n.sum(axis=0)
    mean = safe_ratio(s.sum(axis=0), total)
    residual = s - mean * n
    scale = safe_ratio(clusters, clusters - 1.0)
    return mean, safe_ratio(scale * (residual**2).sum(axis=0), total**2), clusters


def _tables(frame: Frame, scored: ScoredItems) -> tuple[FloatArray, FloatArray]:
    """Score sums and counts per (conversation, model) of a cell's scored items."""
    shape = (len(frame.conversations), len(frame.models))
    where = scored.conversation * shape[1] + scored.model
    # np.bincount adds in the items' order, as np.add.at does, at a fraction of its cost
    sums = np.bincount(where, scored.score, minlength=shape[0] * shape[1]).astype(np.float64)
    counts = np.bincount(where, minlength=shape[0] * shape[1]).astype(np.float64)
    return sums.reshape(shape), counts.reshape(shape)


def subgroup_scores(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    scored: ScoredItems,
    prepared: Sequence[Field],
    min_conversations: int,
    minimum: Minimum,
    subjects: Sequence[int],
) -> tuple[list[GroupScore], set[tuple[str, str]]]:
    """Each model's score per level of each field over a cell's scored items, compared where
    both sides are big enough and the model is under test; and the (field, level) pairs too
    small to compare."""
    rows: list[GroupScore] = []
    small: set[tuple[str, str]] = set()
    sums, counts = _tables(frame, scored)
    for field in prepared:
        level_of = field.code[scored.conversation]
        shown = binned_scores(frame, bootstrap, scored, field.name, field.levels, level_of, minimum)
        p_values = welch_p_values(field, sums, counts)
        answered = (counts[field.labelled] > 0).sum(axis=0)  # labelled conversations per model
        for row in shown:
            m = frame.models.index(row.model)
            if m not in subjects:
                rows.append(row.model_copy(update={"reason": row.reason or YARDSTICK}))
                continue
            rest = int(answered[m]) - row.n_conversations
            if min(row.n_conversations, rest) < min_conversations or row.reason is not None:
                small.add((field.name, row.level))
                reason = f"under {min_conversations} conversations on one side: not compared"
                rows.append(row.model_copy(update={"reason": row.reason or reason}))
                continue
            p = p_values[field.levels.index(row.level), m]
            rows.append(row.model_copy(update={"p_value": None if np.isnan(p) else float(p)}))
    return rows, small


def adjust(rows: Sequence[GroupScore]) -> list[GroupScore]:
    """Holm-adjust every comparison's p-value together."""
    adjusted = holm([row.p_value for row in rows])
    return [row.model_copy(update={"p_holm": p}) for row, p in zip(rows, adjusted, strict=True)]


Levels = tuple[FloatArray, FloatArray, FloatArray]  # sums, counts (rows, levels, models); sizes


def _interaction(levels: Levels, s: FloatArray, n: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The interaction statistic for each row of level sums, counts and sizes (conversations
    per level), and the (rows, levels, models) deviations it sums."""
    level_sums, level_counts, sizes = levels
    means = safe_ratio(level_sums, level_counts)  # (rows, levels, models)
    overall = safe_ratio(s.sum(axis=0), n.sum(axis=0))  # (models,)
    gaps = means - overall  # each model's level mean minus its overall mean
    deviation = gaps - np.nanmean(gaps, axis=2, keepdims=True)  # minus the level's mean gap
    return np.nansum(sizes[..., None] * deviation**2, axis=(1, 2)), deviation


def _per_level(masks: list[FloatArray], s: FloatArray, n: FloatArray) -> Levels:
    """The levels' sums, counts and sizes under level masks (one (rows, conversations) array per
    level), a product per level: the observed statistic's figures are added in this order."""
    sums = np.stack([mask @ s for mask in masks], axis=1)
    counts = np.stack([mask @ n for mask in masks], axis=1)
    return sums, counts, np.stack([mask.sum(axis=1) for mask in masks], axis=1)


def memberships(codes: IntArray, levels: int) -> Members:
    """The `Members` of each row of level codes (-1: in no level) among `levels` levels."""
    rows, conversations = codes.shape
    members = (codes[:, None, :] == np.arange(levels)[:, None]).astype(np.float64)
    return members.reshape(rows * levels, conversations), members.sum(axis=2)


def _shuffled(members: Members, s: FloatArray, n: FloatArray) -> Levels:
    """The levels' sums, counts and sizes under each row of level codes (a shuffle), from
    their `memberships` by one product for every level (another order of adding than the
    observed's: `_p_value` compares them)."""
    flat, sizes = members
    both = (flat @ np.hstack([s, n])).reshape(*sizes.shape, 2 * s.shape[1])
    return both[..., : s.shape[1]], both[..., s.shape[1] :], sizes


def _p_value(null: FloatArray, observed: float) -> float:
    """The permutation p-value: the share of shuffles (and the observed) at least the observed.
    The tolerance is relative, as the last digits another order of adding moves grow with the
    scores' scale."""
    tolerance = 1e-9 * max(1.0, abs(observed))
    return float((1.0 + (null >= observed - tolerance).sum()) / (1.0 + len(null)))


def interactions(
    frame: Frame,
    cell: Cell,
    scored: ScoredItems,
    prepared: Sequence[Field],
    subjects: Sequence[int],
    min_conversations: int,
    minimum: Minimum,
) -> list[Interaction]:
    """Per field: does the gap between the models under test change with its level, over the
    cell's scored items? (No test where they fall in fewer than `minimum` clusters.)"""
    models = [m for m in sorted(subjects) if cell.rows(frame, m).size]
    out: list[Interaction] = []
    if len(models) < 2:
        return out
    sums, counts = _tables(frame, scored)
    too_few = minimum.of(scored.conversation)
    named = [frame.models[m] for m in models]
    for field in prepared:
        labels = field.code[field.labelled]
        present = (counts[field.labelled][:, models] > 0).any(axis=1)  # the cell's conversations
        sizes = np.bincount(labels[present], minlength=len(field.levels))
        recode, names = pooled(field.levels, sizes, min_conversations)
        base = {"task": cell.task, "group": field.name, "levels": list(names), "models": named}
        if too_few is not None or len(names) < 2:
            reason = (
                too_few or f"under 2 levels of {min_conversations} conversations, rare ones pooled"
            )
            out.append(
                Interaction(**base, statistic=None, p_value=None, largest=None, reason=reason)
            )
            continue
        s, n = sums[field.labelled][:, models], counts[field.labelled][:, models]
        labels = recode[labels]
        masks = [(labels == level).astype(np.float64)[None] for level in range(len(names))]
        observed, _ = _interaction(_per_level(masks, s, n), s, n)
        shuffled = _shuffled(field.pooled_members(recode, len(names)), s, n)
        null, _ = _interaction(shuffled, s, n)
        p = _p_value(null, float(observed[0]))
        largest = where_behind(named, names, gaps(masks, s, n))
        out.append(Interaction(**base, statistic=float(observed[0]), p_value=p, largest=largest))
    return out


def pooled(levels: Sequence[str], sizes: IntArray, least: int) -> tuple[IntArray, tuple[str, ...]]:
    """Level code -> code among the levels tested (-1: left out), and their names; rare levels
    pooled into "other". Index -1 maps to -1, so unlabelled conversations stay out."""
    kept = [i for i, size in enumerate(sizes) if size >= least]
    rare = [i for i, size in enumerate(sizes) if size < least]
    names = [levels[i] for i in kept]
    recode = np.full(len(levels) + 1, -1, dtype=np.int64)
    recode[kept] = np.arange(len(kept))
    if rare and int(sizes[rare].sum()) >= least:
        if OTHER not in names:
            names.append(OTHER)
        recode[rare] = names.index(OTHER)
    return recode, tuple(names)


def gaps(masks: list[FloatArray], s: FloatArray, n: FloatArray) -> FloatArray:
    """(levels, models): each model's mean at each level minus the mean of the other models'
    means there (NaN where a model has no items at that level)."""
    means = safe_ratio(
        np.concatenate([mask @ s for mask in masks]), np.concatenate([mask @ n for mask in masks])
    )
    defined = ~np.isnan(means)
    total = np.where(defined, means, 0.0).sum(axis=1, keepdims=True)
    others = safe_ratio(
        total - np.where(defined, means, 0.0), defined.sum(axis=1, keepdims=True) - 1.0
    )
    return np.where(defined, means - others, np.nan)


def where_behind(models: Sequence[str], levels: Sequence[str], gap: FloatArray) -> str | None:
    """Where the gap is: the model whose gap to the others moves most across the levels (of two
    mirror images, the one behind: with two levels the deviations mirror), its gap per level."""
    defined = ~np.isnan(gap).all(axis=0)
    if not defined.any():
        return None
    filled = np.where(defined, gap, 0.0)  # a model with no gap anywhere: 0s, never chosen
    highest, least = np.nanmax(filled, axis=0), np.nanmin(filled, axis=0)
    spread = np.where(defined, highest - least, -np.inf)
    lowest = np.where(defined, least, np.inf)
    model = int(np.lexsort((lowest, -np.round(spread, 9)))[0])  # mirror images tie on spread
    level = int(np.nanargmin(gap[:, model]))
    shown = ", ".join(f"{name} {gap[i, model]:+.3f}" for i, name in enumerate(levels))
    return (
        f"{models[model]} against the other models' mean: {shown}; "
        f"its gap is lowest at {levels[level]}"
    )


def adjust_interactions(rows: Sequence[Interaction]) -> list[Interaction]:
    adjusted = holm([row.p_value for row in rows])
    return [row.model_copy(update={"p_holm": p}) for row, p in zip(rows, adjusted, strict=True)]
