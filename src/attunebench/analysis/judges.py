"""Can the judge be trusted? Its agreement with the participants' own picks.

The `judge_audit` task runs each judge on the participants' A/B pairs, in both orders; its
records name the judge as `model`. From them, per judge, with cluster-bootstrap intervals:

- accuracy: the share of the judge's decisions (one per order) that match the participant;
- Cohen's kappa between judge and participant over the same decisions (first / second / tie;
  Cohen 1960, Educ. Psychol. Meas. 20(1));
- flip rate: the share of pairs whose pick changes with the order (position bias);
- longer-win share: of the decisions that picked one of two replies of different length, the
  share that picked the longer (length bias; 0.5 is none);
- length-controlled accuracy: the mean of the accuracies on pairs where the participant chose
  the longer and where they chose the shorter reply, so a judge that always prefers length
  cannot score well by it.

All five are functions of per-item counts, so they bootstrap by conversation as matrix products.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, safe_ratio
from attunebench.analysis.frame import FloatArray, Frame
from attunebench.analysis.provenance import kind_of
from attunebench.analysis.schema import Estimate, JudgeAgreement
from attunebench.records import ItemRecord

AUDIT_TASK = "judge_audit"
SIDES = ("first", "second", "tie")
ORDERS = ("ab", "ba")
# per-item statistics, in this order: the 3x3 table of parsed decisions (judge side x
# participant side), unparsed decisions (wrong, but outside kappa), flips, pairs parsed in both
# orders, longer picked, sided picks of unequal length, and correct / decisions on pairs where
# the participant chose the longer, then the shorter reply
N_STATS = 9 + 9


def _side(pick: object, meta: Mapping[str, object]) -> int | None:
    if pick in (None, ""):
        return None
    if pick == "tie":
        return 2
    return 0 if pick == meta.get("first") else 1 if pick == meta.get("second") else None


def audit_stats(record: ItemRecord) -> FloatArray:
    """The per-item statistics of one judge_audit record (zeros unless it is scorable)."""
    out = np.zeros(N_STATS)
    prediction = record.prediction if isinstance(record.prediction, dict) else {}
    gold = record.gold if isinstance(record.gold, dict) else {}
    meta = record.meta
    truth = 2 if gold.get("tie") else _side(gold.get("chosen"), meta)
    if truth is None or record.status == "failed":
        return out
    picks = [
        _side(prediction.get(order), meta) if record.status == "ok" else None for order in ORDERS
    ]
    longer = {"A": 0, "B": 1}.get(str(meta.get("longer")))
    for pick in picks:
        if pick is None:
            out[9] += 1
        else:
            out[3 * pick + truth] += 1
        if pick in (0, 1) and longer is not None:
            out[12] += pick == longer
            out[13] += 1
        if longer is not None and truth in (0, 1):
            base = 14 if truth == longer else 16
            out[base] += pick == truth
            out[base + 1] += 1
    if None not in picks:
        out[10] += picks[0] != picks[1]
        out[11] += 1
    return out


def _kappa(table: FloatArray) -> FloatArray:
    t = table.reshape(*table.shape[:-1], 3, 3)
    total = t.sum(axis=(-1, -2))
    observed = safe_ratio(np.trace(t, axis1=-2, axis2=-1), total)
    expected = safe_ratio((t.sum(axis=-1) * t.sum(axis=-2)).sum(axis=-1), total**2)
    return safe_ratio(observed - expected, 1.0 - expected)


def finish(sums: FloatArray) -> dict[str, FloatArray]:
    table = sums[..., :9]
    correct = table[..., 0] + table[..., 4] + table[..., 8]
    return {
        "accuracy": safe_ratio(correct, table.sum(axis=-1) + sums[..., 9]),
        "kappa": _kappa(table),
        "flip_rate": safe_ratio(sums[..., 10], sums[..., 11]),
        "longer_win_share": safe_ratio(sums[..., 12], sums[..., 13]),
        "accuracy_length_controlled": (
            safe_ratio(sums[..., 14], sums[..., 15]) + safe_ratio(sums[..., 16], sums[..., 17])
        )
        / 2,
    }


def _estimate(point: float, low: float, high: float, what: str) -> Estimate:
    if np.isnan(point):
        return Estimate(value=None, reason=f"no {what} in the audit")
    return Estimate(
        value=float(point),
        ci_low=None if np.isnan(low) else float(low),
        ci_high=None if np.isnan(high) else float(high),
    )


REASONS = {
    "accuracy": "decisions",
    "kappa": "variation in the decisions",
    "flip_rate": "pairs parsed in both orders",
    "longer_win_share": "picks between replies of different length",
    "accuracy_length_controlled": "pairs of different length on both sides",
}


def judge_agreement(
    frame: Frame, bootstrap: ClusterBootstrap, kinds: Mapping[str, str]
) -> list[JudgeAgreement]:
    if AUDIT_TASK not in frame.tasks:
        return []
    mask = (frame.task == frame.tasks.index(AUDIT_TASK)) & (frame.status != 2)
    index = np.flatnonzero(mask)
    stats = np.array([audit_stats(frame.records[i]) for i in index]).reshape(len(index), N_STATS)
    sums = bootstrap.sums(stats, frame.conversation[index], frame.model[index], len(frame.models))
    point, samples = finish(sums.sum(axis=1)), finish(bootstrap.replicate(sums))
    out = []
    for m in np.unique(frame.model[index]):
        judge = frame.models[m]
        mine = index[frame.model[index] == m]
        derived = [bool(frame.records[i].meta.get("derived")) for i in mine]
        estimates = {}
        for name, values in samples.items():
            low, high = bootstrap.interval(values[:, m : m + 1])
            estimates[name] = _estimate(point[name][m], low[0], high[0], REASONS[name])
        out.append(
            JudgeAgreement(
                judge=judge,
                judge_kind=kind_of(judge, kinds.get(judge, "model")),
                n=len(mine),
                n_conversations=int(np.unique(frame.conversation[mine]).size),
                derived_share=sum(derived) / len(derived) if derived else None,
                **estimates,
            )
        )
    return out
