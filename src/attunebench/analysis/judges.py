"""Can the judge be trusted? Its agreement with the participants' own picks.

The `judge_audit` task runs each judge on the participants' A/B pairs, in both orders; its
records name the judge as `model`. The statistics are those of `judge.audit` (accuracy,
per-verdict agreement, Cohen's kappa over first / second / tie (Cohen 1960, Educ. Psychol.
Meas. 20(1)), position flip rate, the longer reply's share of wins next to the participants'
own share, and agreement controlled for length, by balancing and by matching). Each is a
function of per-item counts, computed here in one pass (`audit_counts`), so its
cluster-bootstrap interval is a matrix product with the shared resamples. Tests check that
the point values equal `judge.audit`'s functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, safe_ratio
from attunebench.analysis.frame import FloatArray, Frame
from attunebench.analysis.provenance import Roster
from attunebench.analysis.schema import Estimate, JudgeAgreement
from attunebench.records import ItemRecord

AUDIT_TASK = "judge_audit"
ORDERS = ("ab", "ba")
TIE = "tie"
MATCHED_RATIO = 1.25  # judge.audit.length_matched_agreement's default
# Column layout of `audit_counts`.
SCORE, SCORED, TABLE, AGREE, VERDICTS, FLIPS, BOTH = 0, 1, 2, 11, 12, 13, 14
LONGER_PICKS, SIDED = 15, 16
GOLD_LONGER, GOLD_SIDED = 17, 18
BALANCED = 19  # agree, verdicts where the participant chose the longer; then the shorter
MATCHED = 23  # agree, verdicts on length-matched pairs
WIDTH = 25


def _gold(record: ItemRecord) -> str:
    gold = record.gold if isinstance(record.gold, dict) else {}
    return TIE if gold.get("tie") or gold.get("chosen") is None else str(gold["chosen"])


def _longer(meta: Mapping[str, object]) -> str | None:
    len_a, len_b = meta.get("len_a"), meta.get("len_b")
    if not isinstance(len_a, int | float) or not isinstance(len_b, int | float) or len_a == len_b:
        return None
    return str(meta.get("first") if len_a > len_b else meta.get("second"))


def _matched(meta: Mapping[str, object]) -> bool:
    low, high = sorted((float(meta.get("len_a") or 0), float(meta.get("len_b") or 0)))  # type: ignore[arg-type]
    return low > 0 and high / low <= MATCHED_RATIO


def audit_counts(record: ItemRecord) -> FloatArray:
    """One record's counts (see the column layout); zeros for a failed record."""
    out = np.zeros(WIDTH)
    if record.status == "failed":
        return out
    if record.score is not None:
        out[SCORE], out[SCORED] = record.score, 1.0
    prediction = record.prediction if isinstance(record.prediction, dict) else {}
    picks = [str(prediction[o]) for o in ORDERS if prediction.get(o) is not None]
    meta, gold = record.meta, _gold(record)
    longer, matched = _longer(meta), _matched(meta)

    def side(key: str) -> int:
        return 2 if key == TIE else 0 if key == meta.get("first") else 1

    for pick in picks:
        agree = float(pick == gold)
        out[TABLE + 3 * side(pick) + side(gold)] += 1
        out[AGREE] += agree
        out[VERDICTS] += 1
        if pick != TIE and longer is not None:
            out[LONGER_PICKS] += pick == longer
            out[SIDED] += 1
        if gold != TIE and longer is not None:
            base = BALANCED if gold == longer else BALANCED + 2
            out[base] += agree
            out[base + 1] += 1
        if matched:
            out[MATCHED] += agree
            out[MATCHED + 1] += 1
    if len(picks) == 2:
        out[FLIPS] += picks[0] != picks[1]
        out[BOTH] += 1
    if gold != TIE and longer is not None:
        out[GOLD_LONGER] += gold == longer
        out[GOLD_SIDED] += 1
    return out


def flip_counts(records: Sequence[ItemRecord]) -> FloatArray:
    """Per record: [the pick changed with the order, both orders parsed] (the flip rate alone,
    without the rest of `audit_counts`: preference has one record per model and pair)."""
    out = np.zeros((len(records), 2))
    for row, record in enumerate(records):
        prediction = record.prediction
        if record.status != "failed" and isinstance(prediction, dict):
            ab, ba = prediction.get("ab"), prediction.get("ba")
            if ab is not None and ba is not None:
                out[row] = (float(str(ab) != str(ba)), 1.0)
    return out


def kappa(table: FloatArray) -> FloatArray:
    """Cohen's kappa from a 3x3 table (last axis, judge-major): (p_o - p_e) / (1 - p_e)."""
    t = table.reshape(*table.shape[:-1], 3, 3)
    total = t.sum(axis=(-1, -2))
    observed = safe_ratio(np.trace(t, axis1=-2, axis2=-1), total)
    expected = safe_ratio((t.sum(axis=-1) * t.sum(axis=-2)).sum(axis=-1), total**2)
    room = np.where(1.0 - expected > 1e-12, 1.0 - expected, 0.0)  # p_e = 1: undefined
    return safe_ratio(observed - expected, room)


def statistics(sums: FloatArray) -> dict[str, FloatArray]:
    """Every audit statistic from summed counts (..., WIDTH)."""

    def ratio(at: int) -> FloatArray:
        return safe_ratio(sums[..., at], sums[..., at + 1])

    return {
        "accuracy": ratio(SCORE),
        "agreement": ratio(AGREE),
        "kappa": kappa(sums[..., TABLE : TABLE + 9]),
        "flip_rate": ratio(FLIPS),
        "longer_win_share": ratio(LONGER_PICKS),
        "participant_longer_share": ratio(GOLD_LONGER),
        "length_balanced_agreement": (ratio(BALANCED) + ratio(BALANCED + 2)) / 2,
        "length_matched_agreement": ratio(MATCHED),
    }


UNDEFINED = {
    "accuracy": "no scored pairs", "agreement": "no parsed verdicts",
    "kappa": "no variation in the labels", "flip_rate": "no pair parsed in both orders",
    "longer_win_share": "no pick between replies of different length",
    "participant_longer_share": "no participant pick between replies of different length",
    "length_balanced_agreement": "participants never chose the longer, or never the shorter",
    "length_matched_agreement": "no pair of similar length",
}  # fmt: skip


def _estimate(point: float, low: float, high: float, name: str) -> Estimate:
    if np.isnan(point):
        return Estimate(value=None, reason=UNDEFINED[name])
    return Estimate(value=float(point), ci_low=None if np.isnan(low) else float(low),
                    ci_high=None if np.isnan(high) else float(high))  # fmt: skip


def judge_agreement(
    frame: Frame, bootstrap: ClusterBootstrap, roster: Roster
) -> list[JudgeAgreement]:
    if AUDIT_TASK not in frame.tasks:
        return []
    index = np.flatnonzero(frame.task == frame.tasks.index(AUDIT_TASK))
    counts = np.array([audit_counts(frame.records[i]) for i in index]).reshape(len(index), WIDTH)
    sums = bootstrap.sums(counts, frame.conversation[index], frame.model[index], len(frame.models))
    point, samples = statistics(sums.sum(axis=1)), statistics(bootstrap.replicate(sums))
    out = []
    for m in np.unique(frame.model[index]):
        judge, mine = frame.models[m], index[frame.model[index] == m]
        scored = [i for i in mine if frame.records[i].status != "failed"]
        derived = [bool(frame.records[i].meta.get("derived")) for i in scored]
        estimates = {}
        for name, values in samples.items():
            low, high = bootstrap.interval(values[:, m : m + 1])
            estimates[name] = _estimate(point[name][m], low[0], high[0], name)
        out.append(JudgeAgreement(
            judge=judge, judge_kind=roster.kind(judge), n=len(scored),
            n_failed=len(mine) - len(scored),
            n_conversations=int(np.unique(frame.conversation[scored]).size),
            derived_share=sum(derived) / len(derived) if derived else None, **estimates,
        ))  # fmt: skip
    return out
