"""Judge-audit statistics against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from attunebench.judge import audit
from attunebench.records import ItemRecord


def pair(gold: str, ab: str | None, ba: str | None, len_a: int = 10, len_b: int = 20,
         cid: str = "c") -> ItemRecord:  # fmt: skip
    """A pair a~b; picks are "a", "b" or "tie" per order (None: that order did not parse)."""
    prediction = {o: p for o, p in (("ab", ab), ("ba", ba)) if p is not None}
    both = ab is not None and ba is not None
    score = float(both and ab == ba == gold) if both else 0.0
    return ItemRecord(
        task="judge_audit", model="mock/j", conversation_id=cid, turn_index=0, item_id="a~b",
        status="ok" if both else "invalid", prediction=prediction, score=score,
        gold={"chosen": None if gold == "tie" else gold, "tie": gold == "tie"},
        meta={"first": "a", "second": "b", "len_a": len_a, "len_b": len_b},
    )  # fmt: skip


def confusion_kappa(first: list[str], second: list[str]) -> float:
    """Kappa from the confusion matrix, written independently of the implementation."""
    labels = sorted(set(first) | set(second))
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for a, b in zip(first, second, strict=True):
        table[index[a], index[b]] += 1
    table /= table.sum()
    observed = np.trace(table)
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    return float((observed - expected) / (1 - expected))


def test_cohen_kappa_by_hand_and_against_the_confusion_matrix() -> None:
    # 2x2: agree on 3 of 4; rater 1 says x twice, rater 2 once: p_o=.75, p_e=.5*.25+.5*.75=.5
    assert audit.cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]) == pytest.approx(0.5)
    assert audit.cohen_kappa(["x", "y"], ["y", "x"]) == pytest.approx(-1.0)
    assert audit.cohen_kappa(["x", "x"], ["x", "x"]) is None  # p_e = 1: undefined
    assert audit.cohen_kappa([], []) is None
    rng = np.random.default_rng(7)
    for _ in range(20):
        a = list(rng.choice(["first", "second", "tie"], size=30))
        b = [x if rng.random() < 0.6 else str(rng.choice(["first", "second", "tie"])) for x in a]
        assert audit.cohen_kappa(a, b) == pytest.approx(confusion_kappa(a, b))


def test_accuracy_agreement_flips_and_kappa_on_a_small_audit() -> None:
    records = [
        pair("a", "a", "a"),  # consistent, agrees
        pair("a", "b", "b"),  # consistent, disagrees
        pair("b", "a", "b"),  # flipped with the order
        pair("tie", "tie", "tie"),
        pair("b", "b", None),  # second order unparseable
    ]
    assert audit.judge_accuracy(records) == pytest.approx(2 / 5)
    # 9 parsed verdicts, agreeing: 2 + 0 + 1 + 2 + 1
    assert audit.verdict_agreement(records) == pytest.approx(6 / 9)
    assert audit.flip_rate(records) == pytest.approx(1 / 4)
    golds = ["first"] * 4 + ["second"] * 2 + ["tie"] * 2 + ["second"]
    judged = ["first", "first", "second", "second", "first", "second", "tie", "tie", "second"]
    assert audit.judge_kappa(records) == pytest.approx(confusion_kappa(golds, judged))


def test_length_preference_and_length_controlled_agreement() -> None:
    longer_judge = [  # the judge always picks b, the longer reply
        pair("b", "b", "b"), pair("b", "b", "b"), pair("b", "b", "b"),  # participant chose longer
        pair("a", "b", "b"),  # participant chose the shorter
        pair("a", "b", "b", len_a=20, len_b=20),  # equal lengths: not in the length shares
    ]
    assert audit.longer_win_share(longer_judge) == 1.0
    assert audit.participant_longer_share(longer_judge) == pytest.approx(3 / 4)
    # raw agreement flatters it (6/10); controlled for length it is at chance
    assert audit.verdict_agreement(longer_judge) == pytest.approx(6 / 10)
    assert audit.length_balanced_agreement(longer_judge) == pytest.approx(0.5)
    # only the equal-length pair is length-matched, and there the judge disagreed
    assert audit.length_matched_agreement(longer_judge) == 0.0
    assert audit.length_balanced_agreement(longer_judge[:3]) is None  # no "shorter" group


def test_failed_records_are_left_out() -> None:
    failed = pair("a", "a", "a").model_copy(update={"status": "failed", "score": None})
    assert audit.judge_accuracy([failed]) is None
    assert audit.verdict_agreement([failed]) is None
    assert audit.flip_rate([failed]) is None
