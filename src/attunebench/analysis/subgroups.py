"""Scores by subgroup: participant traits and source fields, with honest comparisons.

Each model's mean score in each level of a conversation-level field (a participant trait such
as age band; the source's name or kind) gets a cluster-bootstrap interval. A level with fewer
than `min_conversations` conversations, in itself or in the rest, is shown but not compared,
and a warning says so. Otherwise the level is compared with the other levels together by a
permutation test that shuffles the level labels across conversations (Good 2005,
"Permutation, Parametric and Bootstrap Tests of Hypotheses", ch. 3); the p-values of all
comparisons in a report are then Holm-adjusted together (`multiplicity.holm`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, safe_ratio
from attunebench.analysis.diagnostics import binned_scores
from attunebench.analysis.frame import BoolArray, FloatArray, Frame, IntArray
from attunebench.analysis.multiplicity import holm
from attunebench.analysis.schema import GroupScore
from attunebench.data.schema import Conversation

DEFAULT_MIN_CONVERSATIONS = 10
DEFAULT_PERMUTATIONS = 2000


@dataclass(frozen=True)
class Field:
    """A conversation-level field: its levels, each conversation's level code (-1: none), the
    labelled conversations, and per level the permuted membership masks (levels, P, labelled)."""

    name: str
    levels: tuple[str, ...]
    code: IntArray
    labelled: IntArray
    permuted: FloatArray


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
        found["source.name"][cid] = conversation.source.name
        found["source.kind"][cid] = conversation.source.kind
    out = []
    for name, level_of in sorted(found.items()):
        levels = tuple(sorted(set(level_of.values())))
        if len(levels) < 2:
            continue
        index = {level: i for i, level in enumerate(levels)}
        code = np.array([index.get(level_of.get(c, ""), -1) for c in frame.conversations])
        labelled = np.flatnonzero(code >= 0)
        shuffled = rng.permuted(np.tile(code[labelled], (permutations, 1)), axis=1)
        permuted = np.stack([(shuffled == level) for level in range(len(levels))]).astype(float)
        out.append(Field(name, levels, code, labelled, permuted))
    return out


def permutation_p_values(field: Field, sums: FloatArray, counts: FloatArray) -> FloatArray:
    """p per (level, model) for 'the level's mean equals the other levels' mean'.

    `sums` and `counts` are per (conversation, model); labels are shuffled by conversation.
    """
    s, n = sums[field.labelled], counts[field.labelled]
    labels = field.code[field.labelled]
    members = np.stack([labels == level for level in range(len(field.levels))]).astype(float)
    observed = _difference(members, s, n)  # (levels, models)
    null = _difference(field.permuted, s, n)  # (levels, permutations, models)
    extreme = (np.abs(null) >= np.abs(observed)[:, None, :] - 1e-12).sum(axis=1)
    p = (1.0 + extreme) / (1.0 + field.permuted.shape[1])
    return np.where(np.isnan(observed), np.nan, p)


def _difference(masks: FloatArray, s: FloatArray, n: FloatArray) -> FloatArray:
    """Mean inside each mask minus mean outside it, per model (last axis)."""
    level_sum, level_count = masks @ s, masks @ n
    rest = safe_ratio(s.sum(axis=0) - level_sum, n.sum(axis=0) - level_count)
    return safe_ratio(level_sum, level_count) - rest


def _tables(frame: Frame, mask: BoolArray) -> tuple[FloatArray, FloatArray]:
    """Score sums and counts per (conversation, model) under a mask."""
    shape = (len(frame.conversations), len(frame.models))
    sums, counts = np.zeros(shape), np.zeros(shape)
    where = (frame.conversation[mask], frame.model[mask])
    np.add.at(sums, where, frame.score[mask])
    np.add.at(counts, where, 1.0)
    return sums, counts


def subgroup_scores(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    task: str,
    variant: str,
    prepared: Sequence[Field],
    min_conversations: int,
) -> tuple[list[GroupScore], set[tuple[str, str]]]:
    """Each model's score per level of each field, compared where both sides are big enough.

    Also returns the (field, level) pairs too small to compare.
    """
    rows: list[GroupScore] = []
    small: set[tuple[str, str]] = set()
    mask = frame.cell(task, variant) & frame.scored
    sums, counts = _tables(frame, mask)
    for field in prepared:
        shown = binned_scores(frame, bootstrap, task, variant, field.name, field.levels,
                              field.code[frame.conversation])  # fmt: skip
        p_values = permutation_p_values(field, sums, counts)
        answered = (counts[field.labelled] > 0).sum(axis=0)  # labelled conversations per model
        for row in shown:
            m = frame.models.index(row.model)
            rest = int(answered[m]) - row.n_conversations
            if min(row.n_conversations, rest) < min_conversations:
                small.add((field.name, row.level))
                reason = f"under {min_conversations} conversations on one side: not compared"
                rows.append(row.model_copy(update={"reason": reason}))
                continue
            p = p_values[field.levels.index(row.level), m]
            rows.append(row.model_copy(update={"p_value": None if np.isnan(p) else float(p)}))
    return rows, small


def adjust(rows: Sequence[GroupScore]) -> list[GroupScore]:
    """Holm-adjust every comparison's p-value together."""
    adjusted = holm([row.p_value for row in rows])
    return [row.model_copy(update={"p_holm": p}) for row, p in zip(rows, adjusted, strict=True)]
