"""A reference's guesses share their scores where the score reads only a few of the gold's
fields (emotion's label guess, behavior's label tuple, preference's two orders): each shared
score is the one the task's own scoring gives that gold, and golds that differ where the score
reads them get scores of their own."""

from __future__ import annotations

import itertools

from attunebench.tasks import behavior, emotion, preference
from attunebench.tasks.behavior import BehaviorGold, f1
from attunebench.tasks.emotion import EmotionGold, EmotionPrediction, score_prediction

LABELS = ("sad", "angry", "calm")


def emotion_golds() -> list[EmotionGold]:
    """Golds differing in labels, primary, numbers and PANAS items, several of each."""
    golds = []
    for i, (primary, extra, panas) in enumerate(
        itertools.product((None, *LABELS), ((), ("calm",), ("sad", "angry")), (0, 1, 3))
    ):
        golds.append(
            EmotionGold(
                primary=primary,
                emotions=extra,
                intensity=1.0 + i % 5,
                valence=(i % 3 - 1) / 2,
                panas={f"item{k}": 1.0 + (i + k) % 5 for k in range(panas)},
            )
        )
    return golds


def test_emotion_label_guess_scores_as_the_task_scores_each_gold() -> None:
    golds = emotion_golds()
    seen = set()
    for label, gold in itertools.product(LABELS, golds):
        found = emotion.label_guess(label, gold)
        if not gold.labels:  # the trap: an item with no label is not guessed
            assert found is None
            continue
        assert found is not None
        guess, scored = found
        # the planted truth: the task's own score of this very gold, numbers and PANAS included
        expected = score_prediction(gold, EmotionPrediction(primary=label, emotions=(label,)))
        assert scored == expected
        assert guess == EmotionPrediction(primary=label, emotions=(label,))
        seen.add(id(scored))
    # golds differing in what the score reads (PANAS reported or not) get scores of their own
    assert len(seen) > len(LABELS) * 2
    panas = [g for g in golds if g.primary == "sad" and not g.emotions]
    scores = {emotion.label_guess("sad", g)[1].values.get("panas_abs_error") for g in panas}  # type: ignore[index]
    assert scores == {None, 4.0}


def test_behavior_guess_scores_f1_of_each_gold() -> None:
    held = [(), ("a",), ("a", "b"), ("b", "c"), ("a",)]
    for labels, behaviors in itertools.product([("a",), ("b",), ()], held):
        found = behavior.behavior_guess(labels, BehaviorGold(behaviors=behaviors))
        assert found is not None
        assert found[1].score == f1(labels, behaviors)
    assert behavior.behavior_guess(None, BehaviorGold(behaviors=("a",))) is None


def test_both_orders_scores_each_pick_pair() -> None:
    keys = ("r1", "r2", "tie", None)
    for ab, ba, gold in itertools.product(keys, keys, ("r1", "r2", "tie")):
        scored = preference.both_orders(ab, ba, gold)
        right_ab, right_ba = float(ab == gold), float(ba == gold)
        assert scored.score == (right_ab + right_ba) / 2
        assert dict(scored.values) == {
            "correct_ab": right_ab,
            "correct_ba": right_ba,
            "consistent": float(ab == ba),
        }
