"""How far a judge agrees with the participants' own picks, and what sways it.

Pure functions over the records of one judge (or one model) on pairs asked in both orders:
`judge_audit` records, and `preference` records too, which have the same shape. Each reads
`prediction` ("ab", "ba": the candidate key each order named, or "tie"), `gold` ("chosen",
"tie") and
`meta` ("first", "second", "len_a", "len_b"). A *verdict* is one order's parsed answer; a
record whose other order did not parse still contributes its parsed one. Every function
returns None, never NaN, when its quantity is undefined. Intervals come from the analysis
package's cluster bootstrap, which resamples conversations and calls these functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from attunebench.records import ItemRecord

ORDERS = ("ab", "ba")
TIE = "tie"
SCORED = ("ok", "invalid")


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def gold_key(item: ItemRecord) -> str:
    gold: dict[str, Any] = item.gold or {}
    return TIE if gold.get("tie") or gold.get("chosen") is None else str(gold["chosen"])


def picks(item: ItemRecord) -> dict[str, str]:
    """The candidate each parsed order picked ("tie" for a tie), by order."""
    prediction: dict[str, Any] = item.prediction or {}
    return {o: str(prediction[o]) for o in ORDERS if prediction.get(o) is not None}


def verdicts(records: Sequence[ItemRecord]) -> list[tuple[str, str, ItemRecord]]:
    """(gold, pick, record) for every parsed verdict of a scored record."""
    return [
        (gold_key(r), pick, r)
        for r in records
        if r.status in SCORED
        for pick in picks(r).values()
    ]


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' labels: (p_o - p_e) / (1 - p_e).

    p_o is the observed agreement, p_e the agreement expected from each rater's label
    frequencies (Cohen 1960). None for no data, or when p_e = 1 (both raters always give the
    same single label), where kappa is undefined.

    >>> cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"])
    0.5
    """
    if len(first) != len(second):
        raise ValueError("the two raters must rate the same items")
    n = len(first)
    if n == 0:
        return None
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    count_a, count_b = Counter(first), Counter(second)
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def judge_accuracy(records: Sequence[ItemRecord]) -> float | None:
    """Share of pairs judged consistently (both orders) and as the participant picked.

    Unparseable verdicts count as wrong (the record's score is 0.0); failed calls are left out.
    """
    return _mean([r.score for r in records if r.status in SCORED and r.score is not None])


def verdict_agreement(records: Sequence[ItemRecord]) -> float | None:
    """Share of parsed verdicts (each order counted once) naming the participant's pick."""
    return _mean([float(gold == pick) for gold, pick, _ in verdicts(records)])


def _side(key: str, item: ItemRecord) -> str:
    # Candidate keys differ between pairs; kappa needs labels shared by all of them.
    if key == TIE:
        return TIE
    return "first" if key == item.meta.get("first") else "second"


def judge_kappa(records: Sequence[ItemRecord]) -> float | None:
    """Cohen's kappa between participants and the judge over parsed verdicts.

    Labels are first reply / second reply / tie (the pair's data order, not the position
    shown), so each order's verdict is one rating of the pair.
    """
    rated = verdicts(records)
    golds = [_side(gold, r) for gold, _, r in rated]
    judged = [_side(pick, r) for _, pick, r in rated]
    return cohen_kappa(golds, judged)


def flip_rate(records: Sequence[ItemRecord]) -> float | None:
    """Share of pairs, among those parsed in both orders, whose pick changed with the order."""
    both = [p for p in (picks(r) for r in records if r.status in SCORED) if len(p) == 2]
    return _mean([float(p["ab"] != p["ba"]) for p in both])


def _longer(item: ItemRecord) -> str | None:
    """The key of the longer reply of the pair, or None for equal lengths."""
    len_a, len_b = item.meta.get("len_a"), item.meta.get("len_b")
    if len_a is None or len_b is None or len_a == len_b:
        return None
    return str(item.meta["first"] if len_a > len_b else item.meta["second"])


def longer_win_share(records: Sequence[ItemRecord]) -> float | None:
    """Share of non-tie verdicts, on pairs of unequal length, that went to the longer reply."""
    return _mean([
        float(pick == _longer(r))
        for _, pick, r in verdicts(records)
        if pick != TIE and _longer(r) is not None
    ])  # fmt: skip


def participant_longer_share(records: Sequence[ItemRecord]) -> float | None:
    """The same share for the participants' own picks: what an unbiased judge would match."""
    scored = [r for r in records if r.status in SCORED]
    return _mean([
        float(gold_key(r) == _longer(r))
        for r in scored
        if gold_key(r) != TIE and _longer(r) is not None
    ])  # fmt: skip


def length_balanced_agreement(records: Sequence[ItemRecord]) -> float | None:
    """Verdict agreement controlled for length: the mean of the agreement where the participant
    chose the longer reply and where they chose the shorter one.

    A judge that always prefers the longer reply scores 0.5 here however often participants
    chose the longer reply. None unless both groups have verdicts.
    """
    groups: dict[bool, list[float]] = {True: [], False: []}
    for gold, pick, item in verdicts(records):
        longer = _longer(item)
        if gold != TIE and longer is not None:
            groups[gold == longer].append(float(pick == gold))
    if not groups[True] or not groups[False]:
        return None
    return (sum(groups[True]) / len(groups[True]) + sum(groups[False]) / len(groups[False])) / 2


def length_matched_agreement(
    records: Sequence[ItemRecord], max_ratio: float = 1.25
) -> float | None:
    """Verdict agreement on pairs whose longer reply is at most `max_ratio` times the shorter."""

    def matched(item: ItemRecord) -> bool:
        lengths = sorted((item.meta.get("len_a") or 0, item.meta.get("len_b") or 0))
        return lengths[0] > 0 and lengths[1] / lengths[0] <= max_ratio

    return _mean([float(gold == pick) for gold, pick, r in verdicts(records) if matched(r)])
