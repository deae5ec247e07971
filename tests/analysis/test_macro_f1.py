"""Macro-F1 against planted truth: its estimand (the gold's labels, fixed for the data), its
ratio-bias correction, and its interval widened to the jackknife's where a few conversations
decide a label (`tasks.helpers.metrics`, `analysis.bootstrap`, `planted.f1_studies`)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score

from attunebench.analysis.bootstrap import ClusterBootstrap, jackknife_widened
from attunebench.stats import Weights
from attunebench.tasks.helpers.metrics import label_counts, macro_f1_statistic
from planted import f1_studies

TRUTH_CONVERSATIONS = 100_000  # the very large draw, smaller: the rarest labels seldom count


def test_macro_f1_is_over_the_gold_labels_as_scikit_learn_gives_them() -> None:
    sets = [
        (frozenset({"a"}), frozenset({"a"})),
        (frozenset({"x"}), frozenset({"b"})),  # x never in gold: no label of its own
        (frozenset({"b"}), frozenset({"b"})),
        (frozenset({"a"}), frozenset({"c"})),
    ]
    labels, values = label_counts(sets)
    found = macro_f1_statistic(values, Weights.ones(len(values)))[0]
    truth = [sorted(g)[0] for _, g in sets]
    named = [sorted(p)[0] for p, _ in sets]
    gold_labels = sorted(set(truth))
    assert found == pytest.approx(f1_score(truth, named, labels=gold_labels, average="macro"))
    assert "x" in labels  # the per-label tables keep it; the average does not
    assert found != pytest.approx(f1_score(truth, named, average="macro"))


def test_a_resample_averages_over_the_labels_of_the_data_not_of_the_resample() -> None:
    # c is in one conversation's gold; a resample without it still counts c where it is named
    pairs = [("a", "a"), ("c", "b"), ("b", "b"), ("a", "c")]  # (named, gold)
    sets = [(frozenset({named}), frozenset({gold})) for named, gold in pairs]
    _, values = label_counts(sets)
    without_c = Weights(np.array([[1.0, 2.0, 1.0, 0.0]]), np.arange(4))
    # a: right once; b: right once, missed twice (named c); c: named twice, in no gold drawn,
    # and still one of the three labels (over the resample's own gold labels it would be 0.75)
    expected = np.mean([1.0, 2 * 1 / (2 * 1 + 2), 0.0])
    assert macro_f1_statistic(values, without_c)[0] == pytest.approx(expected)


def test_the_ratio_bias_correction_recovers_the_planted_f1_at_20_conversations() -> None:
    # each conversation's own label mix and accuracy bias the ratio 2TP / (2TP + FP + FN)
    # downwards at few conversations; subtracted, the estimate lands on the planted truth
    rng = np.random.default_rng(5)
    truths = f1_studies.truth("emotion_turns", 0, TRUTH_CONVERSATIONS)
    corrected, plain = [], []
    for _ in range(600):
        rows, cluster = f1_studies.emotion_turns(rng, 20)
        weights = Weights(np.ones((1, 20)), cluster)
        corrected.append(macro_f1_statistic(rows, weights)[0] - truths.mean())
        plain.append(macro_f1_statistic(rows, Weights.ones(len(rows)))[0] - truths.mean())
    assert abs(np.mean(corrected)) < 0.01
    # one cluster for every item is no clusters at all: no correction, and the bias shows
    assert np.mean(plain) < np.mean(corrected) - 0.002


def test_one_conversation_deciding_a_label_widens_the_interval() -> None:
    rng = np.random.default_rng(3)
    gold = np.array([0, 1] * 9 + [2, 0])  # label 2 in one conversation only
    named = np.where(rng.random(20) < 0.7, gold, (gold + 1) % 3)
    named[18] = 2  # right on its one occurrence
    sets = [(frozenset({int(p)}), frozenset({int(g)})) for p, g in zip(named, gold, strict=True)]
    _, values = label_counts(sets)
    bootstrap = ClusterBootstrap.create(np.arange(20), 2000, np.random.default_rng(0))
    weights = bootstrap.weights(np.arange(20))
    point = macro_f1_statistic(values, weights.unit())[0]
    drawn = macro_f1_statistic(values, weights)
    low, high = bootstrap.interval(drawn[:, None], 20)
    jack = macro_f1_statistic(values, weights.leave_one_out())
    wide = jackknife_widened(point, low[0], high[0], drawn, jack, (0.0, 1.0))
    assert wide[0] < low[0] - 0.01 and wide[1] >= high[0]
    # a mean over many clusters, which no one cluster decides, is left as it was
    scores = rng.random(200)
    many = ClusterBootstrap.create(np.arange(200), 2000, np.random.default_rng(1))
    point_m, drawn_m = many.means(scores, np.arange(200))
    low_m, high_m = many.interval(drawn_m)
    by_one = np.array([np.delete(scores, i).mean() for i in range(200)])
    kept = jackknife_widened(point_m[0], low_m[0], high_m[0], drawn_m[:, 0], by_one, (0, 1))
    assert kept[1] - kept[0] == pytest.approx(high_m[0] - low_m[0], rel=0.1)


def test_macro_f1_intervals_cover_the_planted_truth_in_the_three_designs() -> None:
    # 150 studies a design at 20 conversations (1,000 a cell in benchmarks/validity.py); the
    # bound leaves three standard errors below 95%
    found = f1_studies.coverage(
        sizes=(20,), studies=150, resamples=500, seed=2, truth_conversations=TRUTH_CONVERSATIONS
    )
    for design, cells in found.items():
        assert cells[20].coverage >= 0.9, design
        assert abs(cells[20].bias) < 0.03, design
