"""Judge-audit statistics, from summed per-record counts, against hand-computed values and
scikit-learn's Cohen's kappa."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from attunebench.stats import Weights
from attunebench.tasks.helpers import audit
from attunebench.tasks.helpers.pairs import TIE, PairGold

Row = tuple[str, float | None, PairGold, list[str]]


def pair(gold: str, ab: str | None, ba: str | None, len_a: int = 10, len_b: int = 20) -> Row:
    """A pair a~b; picks are "a", "b" or "tie" per order (None: that order did not parse)."""
    truth = PairGold(
        first="a",
        second="b",
        chosen=None if gold == TIE else gold,
        tie=gold == TIE,
        first_turn=0,
        second_turn=0,
        len_first=len_a,
        len_second=len_b,
    )
    picks = [p for p in (ab, ba) if p is not None]
    both = ab is not None and ba is not None
    score = float(both and ab == ba == truth.key)
    return ("ok" if both else "invalid", score, truth, picks)


def statistic(name: str, rows: list[Row]) -> float | None:
    """A statistic of the summed counts of `rows` (the score: the mean over scored records)."""
    sums = np.array([audit.audit_counts(*row) for row in rows]).reshape(-1, audit.WIDTH)
    sums = sums.sum(axis=0, keepdims=True)
    if name == "score":
        value = sums[0, audit.SCORE] / sums[0, audit.SCORED] if sums[0, audit.SCORED] else None
    else:
        value = float(audit.STATISTICS[name][1](sums)[0])
    return None if value is None or math.isnan(value) else float(value)


def table(first: list[str], second: list[str], labels: list[str]) -> np.ndarray:
    out = np.zeros((len(labels), len(labels)))
    for a, b in zip(first, second, strict=True):
        out[labels.index(a), labels.index(b)] += 1
    return out.reshape(-1)


def test_kappa_by_hand_and_against_scikit_learn() -> None:
    labels = ["first", "second", "tie"]
    # agree on 3 of 4; rater 1 says first twice, rater 2 once: p_o=.75, p_e=.5*.25+.5*.75=.5
    by_hand = table(
        ["first", "first", "second", "second"], ["first", "second", "second", "second"], labels
    )
    assert float(audit.kappa(by_hand)) == pytest.approx(0.5)
    assert float(audit.kappa(table(["first", "second"], ["second", "first"], labels))) == -1.0
    assert math.isnan(float(audit.kappa(table(["tie", "tie"], ["tie", "tie"], labels))))  # p_e=1
    rng = np.random.default_rng(7)
    tables, expected = [], []
    for _ in range(20):
        a = list(rng.choice(labels, size=30))
        b = [x if rng.random() < 0.6 else str(rng.choice(labels)) for x in a]
        tables.append(table(a, b, labels))
        expected.append(cohen_kappa_score(a, b))
    # a batch of tables at once, as the bootstrap hands them
    assert audit.kappa(np.array(tables)) == pytest.approx(expected)


def test_accuracy_agreement_flips_and_kappa_on_a_small_audit() -> None:
    rows = [
        pair("a", "a", "a"),  # consistent, agrees
        pair("a", "b", "b"),  # consistent, disagrees
        pair("b", "a", "b"),  # flipped with the order
        pair(TIE, TIE, TIE),
        pair("b", "b", None),  # second order unparseable
    ]
    assert statistic("score", rows) == pytest.approx(2 / 5)
    # 9 parsed verdicts, agreeing: 2 + 0 + 1 + 2 + 1
    assert statistic("agreement", rows) == pytest.approx(6 / 9)
    assert statistic("flip_rate", rows) == pytest.approx(1 / 4)
    golds = ["first"] * 4 + ["second"] * 2 + ["tie"] * 2 + ["second"]
    judged = ["first", "first", "second", "second", "first", "second", "tie", "tie", "second"]
    assert statistic("kappa", rows) == pytest.approx(cohen_kappa_score(judged, golds))


def test_length_preference_and_length_controlled_agreement() -> None:
    longer_judge = [  # the judge always picks b, the longer reply
        pair("b", "b", "b"),
        pair("b", "b", "b"),
        pair("b", "b", "b"),  # participant chose the longer three times
        pair("a", "b", "b"),  # and the shorter once
        pair("a", "b", "b", len_a=20, len_b=20),  # equal lengths: not in the length shares
    ]
    assert statistic("longer_win_share", longer_judge) == 1.0
    assert statistic("participant_longer_share", longer_judge) == pytest.approx(3 / 4)
    # raw agreement flatters it (6/10); controlled for length it is at chance
    assert statistic("agreement", longer_judge) == pytest.approx(6 / 10)
    assert statistic("length_balanced_agreement", longer_judge) == pytest.approx(0.5)
    # only the equal-length pair is length-matched, and there the judge disagreed
    assert statistic("length_matched_agreement", longer_judge) == 0.0
    assert statistic("length_balanced_agreement", longer_judge[:3]) is None  # no "shorter"


def test_failed_records_count_for_nothing() -> None:
    _, _, gold, picks = pair("a", "a", "a")
    assert not audit.audit_counts("failed", None, gold, picks).any()
    rows = [("failed", None, gold, picks)]
    for name in ("score", "agreement", "flip_rate", "kappa"):
        assert statistic(name, rows) is None, name


def test_a_resample_weighs_each_records_counts() -> None:
    rows = [pair("a", "a", "a"), pair("b", "a", "b"), pair(TIE, "a", TIE), pair("b", "b", "b")]
    metrics = {m.name: m for m in audit.audit_metrics(lambda recs: np.array(recs))}
    counts = np.array([audit.audit_counts(*row) for row in rows])
    weights = [2.0, 0.0, 1.0, 3.0]
    repeated = [row for row, w in zip(rows, weights, strict=True) for _ in range(int(w))]
    for name, metric in metrics.items():
        resampled = float(metric.evaluate(list(counts), Weights.of_items(weights))[1][0])
        expected = statistic(name, repeated)
        if expected is None:
            assert math.isnan(resampled), name
        else:
            assert resampled == pytest.approx(expected), name
