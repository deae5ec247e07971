"""A cross-fitted reference's metrics read within its folds share one `fold_weights`
(`analysis.references.predictors`): every metric's point and resamples are bit-identical to
those read with weights of their own, including a fold where a corpus part has no item."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.references.predictors import (
    RowScoring,
    fold_weights,
    guessed_views,
    shown_metrics,
    within_folds,
)
from attunebench.data.schema import State, Turn
from attunebench.tasks import emotion
from attunebench.tasks.base import Guess, View
from attunebench.tasks.helpers.metrics import Found, Values
from planted import planted_parts
from planted.shuffled_gold import item_views

LABELS = ("sadness", "anxiety", "joy")


def planted(right: float, seed: int = 2) -> tuple[list[View[Any, Any]], np.ndarray, np.ndarray]:
    """Emotion items of two corpus parts, one a conversation, guessed right with chance
    `right`; each item's conversation code and fold. Fold 0 holds no item of the second part."""
    rng = np.random.default_rng(seed)
    conversations, folds = [], []
    for p, name in enumerate(("planted-sad", "planted-glad")):
        for c in range(40):
            label = str(rng.choice(LABELS))
            turn = Turn(index=0, user="So it goes.", state=State(primary=label, emotions=(label,)))
            cid = f"{name}-{c}"
            conversations.append(planted_parts.conversation_in_part(cid, name, [turn]))
            folds.append(c % 5 if p == 0 else 1 + c % 4)
    task = emotion.EmotionTask()
    items = [i for i in task.items(conversations) if i.variant in ("", "blind")]
    assert len(items) == len(conversations)
    guesses: list[Guess] = []
    for item in items:
        label = str(item.gold.primary if rng.random() < right else rng.choice(LABELS))
        guesses.append(emotion.label_guess(label, item.gold))
    views, kept = guessed_views(item_views(items), guesses)
    assert len(kept) == len(items)
    return views, np.arange(len(items), dtype=np.int64), np.asarray(folds, dtype=np.int64)


def read_all(right: float, shared: bool) -> list[tuple[float, np.ndarray]]:
    views, codes, folds = planted(right)
    rng = np.random.default_rng(7)
    weights = ClusterBootstrap.create(np.arange(len(codes), dtype=np.int64), 300, rng).weights(
        codes
    )
    per_fold = fold_weights(folds) if shared else None
    read: dict[Values, Found] = {}
    out = []
    for metric in shown_metrics(emotion.EmotionTask()):
        found = read.setdefault(metric.values, metric.values(views))
        out.append(within_folds(metric, found, weights, folds, per_fold))
    return out


@pytest.mark.parametrize("right", [0.6, 1.0])
def test_shared_fold_weights_give_bit_identical_points_and_resamples(right: float) -> None:
    shared, fresh = read_all(right, True), read_all(right, False)
    assert len(shared) == len(fresh) > 1
    for (point, samples), (alone, alone_samples) in zip(shared, fresh, strict=True):
        assert point == alone or (np.isnan(point) and np.isnan(alone))
        assert np.array_equal(samples, alone_samples, equal_nan=True)


def test_a_perfect_guess_scores_one_in_every_fold_and_resample() -> None:
    headline = emotion.EmotionTask().scoring.headline_metric
    names = [m.name for m in shown_metrics(emotion.EmotionTask())]
    point, samples = read_all(1.0, True)[names.index(headline)]
    assert point == pytest.approx(1.0)
    assert np.allclose(samples, 1.0)
    # the trap: a reader right 60% of the time is not scored as a perfect one
    assert read_all(0.6, True)[names.index(headline)][0] < 0.8


def test_fold_weights_weigh_each_folds_items_once() -> None:
    folds = np.array([2, 0, 2, 4, 0], dtype=np.int64)
    made = fold_weights(folds)
    assert made.counts.tolist() == [[0, 1, 0, 0, 1], [1, 0, 1, 0, 0], [0, 0, 0, 1, 0]]
    assert made.counts.sum(axis=1).tolist() == [2, 2, 1]


def test_a_cells_references_share_weights_and_still_read_their_own_numbers() -> None:
    # Planted: two references guessing the same 80 items (right 60% and 100% of the time),
    # read one after the other with the weights of one `RowScoring`. Known answer: each one's
    # points and resamples are bit-identical to those read with weights of its own. A trap: a
    # reference that guessed fewer items must get weights of its own, not the shared ones.
    views_a, codes, folds = planted(0.6, seed=3)
    views_b, _, _ = planted(1.0, seed=3)
    rng = np.random.default_rng(7)
    bootstrap = ClusterBootstrap.create(np.arange(len(codes), dtype=np.int64), 300, rng)
    scoring = RowScoring(bootstrap, Minimum(10, "conversation", bootstrap.cluster_of), True)
    metrics = shown_metrics(emotion.EmotionTask())
    for views in (views_a, views_b):
        weights, (shared, per_fold) = scoring.weights(codes.copy()), scoring.folds(folds.copy())
        assert weights is scoring.weights(codes) and shared is scoring.folds(folds)[0]
        read: dict[Values, Found] = {}
        for metric in metrics:
            found = read.setdefault(metric.values, metric.values(views))
            point, samples = within_folds(metric, found, weights, shared, per_fold)
            alone, alone_samples = within_folds(metric, found, bootstrap.weights(codes), folds)
            assert point == alone or (np.isnan(point) and np.isnan(alone))
            assert samples.tobytes() == alone_samples.tobytes()
    fewer = codes[:40]
    assert scoring.weights(fewer) is not scoring.weights(codes)
    assert scoring.weights(fewer).cluster.tolist() == bootstrap.cluster_of[fewer].tolist()
    assert len(scoring.folds(folds[:40])[0]) == 40
