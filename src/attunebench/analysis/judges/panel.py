"""A panel of judges: do they agree with each other, with the participants, and with
themselves when the order is swapped?

Inter-judge agreement is Krippendorff's alpha for nominal data (Krippendorff 2011), a function
of summed per-comparison coincidence counts so that whole conversations resample; the panel's
verdict is its judges' majority (a split panel scores 0.5), read per comparison (`per_unit`) by
the correction and the self-preference alike.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.frame import FloatArray, IntArray
from attunebench.analysis.judges.verdict_table import (
    FIRST,
    JUDGED,
    NONE,
    SECOND,
    VerdictTable,
    win_for,
)
from attunebench.analysis.schema import JudgePanel, PanelJudge
from attunebench.analysis.sums import estimate, mean

Mask = np.ndarray[Any, Any]
SPLIT = -2  # a panel with no majority


def vote_counts(table: VerdictTable, mask: Mask) -> tuple[FloatArray, IntArray, IntArray]:
    """Per comparison and order (a `slot`): the usable votes for first, second and tie, the
    slot of each row, and each slot's conversation."""
    usable = mask & (table.pick != NONE)
    slot_key = table.unit * 2 + table.order
    slots, slot_of = np.unique(slot_key[mask], return_inverse=True)
    counts = np.zeros((len(slots), 3))
    rows = np.flatnonzero(mask)
    np.add.at(counts, (slot_of[usable[rows]], table.pick[rows][usable[rows]]), 1.0)
    conversation = np.zeros(len(slots), dtype=np.int64)
    conversation[slot_of] = table.conversation[rows]
    return counts, slot_of, conversation


def coincidences(counts: FloatArray) -> tuple[FloatArray, Mask]:
    """Each slot's contribution to the coincidence matrix (slots x 9), and which slots have
    two or more values (the only pairable ones)."""
    m = counts.sum(axis=1)
    pairable = m >= 2
    c = counts[pairable]
    outer = c[:, :, None] * c[:, None, :] - np.eye(3)[None] * c[:, :, None]
    return (outer / (m[pairable] - 1)[:, None, None]).reshape(-1, 9), pairable


def nominal_alpha(sums: FloatArray) -> FloatArray:
    """Alpha from summed coincidences (..., 9): 1 - (n - 1) D_o / D_e for nominal data."""
    o = sums.reshape(*sums.shape[:-1], 3, 3)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    disagree = n - np.trace(o, axis1=-2, axis2=-1)
    expected = n**2 - (n_c**2).sum(axis=-1)
    out: FloatArray = np.where(
        expected > 1e-12,
        1.0 - (n - 1) * disagree / np.where(expected > 1e-12, expected, 1.0),
        np.nan,
    )
    return out


def majority(counts: FloatArray) -> IntArray:
    """Each slot's majority pick, or SPLIT where no pick has more votes than every other."""
    top = counts.max(axis=1)
    unique = (counts == top[:, None]).sum(axis=1) == 1
    out: IntArray = np.where(unique & (top > 0), counts.argmax(axis=1), SPLIT)
    return out


def flips(table: VerdictTable, judge: int) -> tuple[FloatArray, IntArray]:
    """Per comparison this judge gave usable verdicts on in both orders: 1 if they differ."""
    rows = np.flatnonzero((table.judge == judge) & (table.pick != NONE))
    first: dict[int, int] = {}
    second: dict[int, int] = {}
    for row in rows:
        (first if table.order[row] == 0 else second)[int(table.unit[row])] = int(row)
    both = [(first[u], second[u]) for u in first if u in second]
    values = np.array([float(table.pick[a] != table.pick[b]) for a, b in both])
    conversations = np.array([table.conversation[a] for a, _ in both], dtype=np.int64)
    return values, conversations


class Units(NamedTuple):
    """Per comparison (both orders, every judge) of one model's reply: the panel's win for it,
    the participant's (audit pairs only), its conversation, and the reply's length."""

    judged: FloatArray
    people: FloatArray
    where: IntArray
    length: FloatArray


def per_unit(table: VerdictTable, mask: Mask, side: IntArray) -> Units:
    """The rows of `mask` as comparisons, the model's reply on `side` (FIRST or SECOND) of
    each row; the panel's majority in each order (a split 0.5), averaged over the orders."""
    counts, slot_of, conversation = vote_counts(table, mask)
    at = np.zeros(len(counts), dtype=np.int64)
    at[slot_of] = np.flatnonzero(mask)  # a row of each slot: the slot's unit, side and truth
    slot_unit, slot_side, slot_truth = table.unit[at], side[at], table.truth[at]
    slot_length = table.lengths[at, side[at]]
    picks = majority(counts)
    wins = np.where(picks == SPLIT, 0.5, win_for(picks, slot_side))
    voted = counts.sum(axis=1) > 0
    units, unit_of = np.unique(slot_unit[voted], return_inverse=True)
    judged = np.bincount(unit_of, wins[voted]) / np.bincount(unit_of)
    people, length = np.zeros(len(units)), np.zeros(len(units))
    people[unit_of] = win_for(slot_truth[voted], slot_side[voted])
    length[unit_of] = slot_length[voted]
    where = np.zeros(len(units), dtype=np.int64)
    where[unit_of] = conversation[voted]
    return Units(judged, people, where, length)


def audited(table: VerdictTable, model: str, judge: int | None = None) -> Units:
    """Per audit pair with exactly one reply by `model`: the panel's win for it (with
    `judge`, that judge's), the participant's, the conversation and the reply's length."""
    side = np.array(
        [
            FIRST if a == model and b != model else SECOND if b == model and a != model else NONE
            for a, b in table.authors
        ]
    )
    mask = table.audit_like_response() & (side != NONE)
    if judge is not None:
        mask &= table.judge == judge
    return per_unit(table, mask, side)


def judged_units(table: VerdictTable, model: str, judge: int | None = None) -> Units:
    """Per judged comparison of `model`'s reply: the panel's (or `judge`'s) win, and its length."""
    mask = np.array([s == model for s in table.subject], dtype=bool) & table.is_task(JUDGED)
    if judge is not None:
        mask &= table.judge == judge
    return per_unit(table, mask, np.full(len(mask), FIRST))


def judge_panel(
    table: VerdictTable, bootstrap: ClusterBootstrap, minimum: Minimum
) -> JudgePanel | None:
    if not table.judges:
        return None
    everything = np.ones(len(table.pick), dtype=bool)
    counts, _, conversation = vote_counts(table, everything)
    values, pairable = coincidences(counts)
    alone = "one judge: no agreement between judges to measure"
    alike = "no comparison got two usable verdicts, or every verdict was the same"
    why = alone if len(table.judges) == 1 else alike
    alpha = estimate(bootstrap, minimum, values, conversation[pairable], nominal_alpha, why)
    audit = table.truth != NONE
    audit_counts, slot_of, audit_conversation = vote_counts(table, audit)
    truth = np.full(len(audit_counts), NONE)
    truth[slot_of] = table.truth[audit]
    rate, unaudited = partial(mean, bootstrap, minimum), "no usable verdict on an audit pair"
    per_judge = []
    for j, name in enumerate(table.judges):
        flipped, where = flips(table, j)
        own = audit & (table.judge == j) & (table.pick != NONE)
        named = (table.pick[own] == table.truth[own]).astype(np.float64)
        per_judge.append(
            PanelJudge(
                judge=name,
                order_consistency=rate(1.0 - flipped, where, "no comparison in both orders"),
                agreement=rate(named, table.conversation[own], unaudited),
                n_verdicts=int((table.judge == j).sum()),
            )
        )
    voted = audit_counts.sum(axis=1) > 0
    picks = majority(audit_counts)  # a split panel agrees half
    agreed = np.where(picks == SPLIT, 0.5, (picks == truth).astype(np.float64))[voted]
    return JudgePanel(
        judges=list(table.judges),
        alpha=alpha,
        n_units=int(pairable.sum()),
        agreement=rate(agreed, audit_conversation[voted], unaudited),
        per_judge=per_judge,
    )
