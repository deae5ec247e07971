"""Power from a pilot: it resamples the report's own paired difference of the headline (not the
mean item score), a curve of known shape gives back its 80% point, a planted pair's pilot
states a range that holds the conversations the report's test needs, and a pilot whose
difference is not significant still states its figures (the range says it cannot bound them)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from attunebench.analysis import Options, build_summary
from attunebench.analysis.comparisons.contexts import paired_items
from attunebench.analysis.comparisons.differences import headline_pair, report_cell
from attunebench.analysis.comparisons.power import (
    PowerCurve,
    Settings,
    conversations_for,
    power_curve,
)
from attunebench.analysis.frame import Frame
from attunebench.analysis.loading import Runs
from planted import synthetic
from planted.synthetic import Plan

FAST = Settings(sizes=(10, 30, 100, 300, 1000, 5000), simulations=100, resamples=100)


def pilot(accuracy: dict[str, dict[str, float]], **fields: object) -> Runs:
    return synthetic.runs(Plan(accuracy, **fields))  # type: ignore[arg-type]


def curve(runs: Runs, a: str, b: str, task: str = "emotion", seed: int = 0) -> PowerCurve:
    return power_curve(runs, task, a, b, rng=np.random.default_rng(seed), settings=FAST)


PAIR = {"m/a": {"rating": 0.6, "emotion": 0.6}, "m/b": {"rating": 0.45, "emotion": 0.45}}


@pytest.mark.parametrize("task", ["rating", "emotion"])
def test_the_pilot_difference_is_the_reports_headline_difference(task: str) -> None:
    runs = pilot(PAIR, conversations=30, conversation_spread=0.5)
    found = curve(runs, "m/a", "m/b", task)
    summary = build_summary(runs, Options(resamples=200, differences=(("m/a", "m/b"),)))
    (reported,) = [d for d in summary.differences if d.task == task]
    assert found.metric == reported.metric != "score"
    assert found.difference == pytest.approx(reported.value, abs=1e-12)
    if task == "rating":  # the trap: the mean item score's paired difference, read before
        frame = Frame.from_records(runs.records)
        a, b, _ = paired_items(frame, task, (found.variant, "m/a"), (found.variant, "m/b"))
        assert abs(float((a - b).mean()) - reported.value) > 0.02  # type: ignore[operator]


def test_a_study_of_some_conversations_reads_what_the_report_reads_of_them() -> None:
    runs = pilot(PAIR, conversations=40, conversation_spread=0.5)
    frame = Frame.from_records(runs.records)
    cell = report_cell(runs, frame, "rating")
    assert cell is not None
    pair = headline_pair(frame, cell, "m/a", "m/b")
    assert pair is not None
    chosen = np.array([3, 17, 5, 29, 11, 38, 0, 22, 9, 31, 14, 26])
    kept = {frame.conversations[c] for c in chosen}
    # the pair's clusters are the frame's conversations in order (every one has items here)
    alone = Runs(runs.runs, tuple(r for r in runs.records if r.conversation_id in kept))
    summary = build_summary(alone, Options(resamples=200, differences=(("m/a", "m/b"),)))
    (reported,) = [d for d in summary.differences if d.task == "rating"]
    # a study is its conversations' counts, as power draws them
    study = np.bincount(chosen, minlength=pair.clusters).astype(np.float64)
    assert pair.differences(study[None, :])[0] == pytest.approx(reported.value, abs=1e-12)


def test_a_known_power_curve_gives_back_its_80_percent_point() -> None:
    # Planted: the power of a two-sided z test of effect 0.25 per sqrt(conversation); it
    # reaches 80% at ((1.96 + 0.84) / 0.25)^2 = 125.6 conversations.
    sizes = (10, 20, 50, 100, 200, 500)
    critical = stats.norm.ppf(0.975)
    power = [float(stats.norm.cdf(0.25 * np.sqrt(n) - critical)) for n in sizes]
    truth = ((critical + stats.norm.ppf(0.8)) / 0.25) ** 2
    assert conversations_for(sizes, power, 100_000) == pytest.approx(truth, rel=0.01)
    steep = [float(stats.norm.cdf(1.2 * np.sqrt(n) - critical)) for n in sizes]
    found = conversations_for(sizes, steep, 100_000)
    assert found == pytest.approx(((critical + stats.norm.ppf(0.8)) / 1.2) ** 2, rel=0.05)
    assert conversations_for(sizes, [0.1] * len(sizes), 1000) is None


def test_a_pilot_that_is_not_significant_still_states_its_figures() -> None:
    # The trap: silence when the pilot's interval reaches 0. Equal models: the range says
    # the pilot cannot bound it above, and a central figure is still given.
    stated = 0
    for seed in range(4):
        accuracy = {"m/a": {"emotion": 0.6}, "m/b": {"emotion": 0.6}}
        found = curve(pilot(accuracy, conversations=30, seed=seed), "m/a", "m/b")
        assert found.ci_low is not None and found.ci_high is not None
        assert found.power and found.needed_low is not None
        if found.ci_low <= 0.0 <= found.ci_high:
            stated += 1
            assert found.needed_high is None and "not enough pilot data" in found.note
            assert found.metric in found.note and "macro_f1" in found.note
    assert stated >= 3


def test_a_large_gap_needs_few_conversations_and_its_range_is_bounded() -> None:
    runs = pilot({"m/a": {"emotion": 0.95}, "m/b": {"emotion": 0.2}}, conversations=30)
    found = curve(runs, "m/a", "m/b")
    assert found.needed is not None and found.needed <= 20
    assert found.needed_low is not None and found.needed_high is not None
    assert found.needed_low <= found.needed <= found.needed_high
    assert found.power[-1] == 1.0


def test_identical_models_never_differ() -> None:
    runs = pilot({"m/a": {"emotion": 0.5}}, conversations=30)
    twin = Runs(
        runs.runs,
        runs.records + tuple(r.model_copy(update={"model": "m/twin"}) for r in runs.records),
    )
    found = curve(twin, "m/a", "m/twin")
    assert found.needed is None and found.power == () and "never differ" in found.note


def test_power_is_seeded() -> None:
    runs = pilot(PAIR, conversations=30)
    assert curve(runs, "m/a", "m/b", seed=4).power == curve(runs, "m/a", "m/b", seed=4).power


def test_a_pilot_with_one_conversation_says_so() -> None:
    assert "fewer than 2" in curve(pilot(PAIR, conversations=1), "m/a", "m/b").note


def test_only_a_headline_the_report_widens_is_stretched_to_the_jackknife() -> None:
    runs = pilot(PAIR, conversations=30, items={"emotion": 1}, conversation_spread=0.5)
    rating, emotion = (curve(runs, "m/a", "m/b", task) for task in ("rating", "emotion"))
    assert rating.stretch == 1.0  # the position-adjusted correlation's bootstrap is trusted
    assert emotion.stretch > 1.05 and emotion.metric == "macro_f1"  # 1.17: one item each
