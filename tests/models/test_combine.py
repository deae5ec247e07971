"""`AnswerForm.combine`, what majority and knn answer from: the weighted mode of a label, the
labels carrying half the weight, the weighted mean of a number, a weighted pick of a pair's
place. Known answers where weight and count disagree; the trap is a tie decided by the order
the golds come in (the train file's), which a shuffled train split would change."""

from __future__ import annotations

import itertools

import pytest

from testkit.servers import form_of

GOLDS = [
    {"primary": "anger", "emotions": ["anger", "fear"], "intensity": 5.0},
    {"primary": "sadness", "emotions": ["sadness"], "intensity": 1.0},
    {"primary": "sadness", "emotions": ["sadness", "fear"], "intensity": None},
]


def test_weight_outvotes_count() -> None:
    combined = form_of("emotion").combine(GOLDS, [3.0, 1.0, 1.0])
    assert combined["primary"] == "anger"  # 3 against 2, though sadness is said twice
    assert combined["emotions"] == ["fear", "anger"]  # half the weight or more, heaviest first
    assert combined["intensity"] == pytest.approx((3 * 5.0 + 1 * 1.0) / 4)  # a null holds none
    unweighted = form_of("emotion").combine(GOLDS)
    assert unweighted["primary"] == "sadness"
    assert unweighted["emotions"] == ["fear", "sadness"]  # 2 of 3 each: a tie, by name
    assert unweighted["intensity"] == pytest.approx(3.0)


def test_a_tie_never_depends_on_the_order_of_the_golds() -> None:
    tied = [
        {"primary": "depression", "emotions": ["depression"]},
        {"primary": "anxiety", "emotions": ["anxiety"]},
    ]
    form = form_of("emotion")
    answers = {str(form.combine(list(order))) for order in itertools.permutations(tied)}
    # the primary label by name; each list half the weight, so both, by name
    assert answers == {str({"primary": "anxiety", "emotions": ["anxiety", "depression"]})}


def test_a_pair_is_the_place_with_most_weight() -> None:
    form = form_of("preference")
    first = {"first": "r1", "second": "r2", "chosen": "r1"}
    second = {"first": "r3", "second": "r4", "chosen": "r4"}
    assert form.combine([first, second, second], [5.0, 1.0, 1.0])["chosen"] == "first"
    assert form.combine([first, second, second])["chosen"] == "second"
    split = {str(form.combine(list(order))) for order in itertools.permutations([first, second])}
    assert len(split) == 1  # neighbours split evenly: one answer whatever their order
