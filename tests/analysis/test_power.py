"""Power by resampling a pilot: a planted gap needs few conversations, identical models never
differ, and with no real difference the test rejects at most 6% of studies of 10
conversations (nominal 5%)."""

from __future__ import annotations

import numpy as np
import pytest

from attunebench.analysis import synthetic
from attunebench.analysis.frame import Frame
from attunebench.analysis.loading import Runs
from attunebench.analysis.power import PowerCurve, power_curve, simulated_power
from attunebench.analysis.synthetic import Plan


def curve(runs: Runs, a: str, b: str, task: str = "emotion", seed: int = 0) -> PowerCurve:
    frame = Frame.from_records(runs.records)
    return power_curve(frame, task, a, b, simulations=300, rng=np.random.default_rng(seed))


def pilot(accuracy: dict[str, dict[str, float]], **fields: object) -> Runs:
    return synthetic.runs(Plan(accuracy, **fields))  # type: ignore[arg-type]


def test_a_large_gap_is_reached_early_and_power_rises() -> None:
    runs = pilot({"m/a": {"emotion": 0.8}, "m/b": {"emotion": 0.4}}, conversations=30)
    result = curve(runs, "m/a", "m/b")
    assert result.needed is not None and result.needed <= 50
    assert result.power[-1] == 1.0 and result.power[0] <= result.power[-1]


def test_a_gap_found_at_the_smallest_size_says_or_fewer() -> None:
    runs = pilot({"m/a": {"emotion": 0.95}, "m/b": {"emotion": 0.1}}, conversations=30)
    result = curve(runs, "m/a", "m/b")
    assert result.needed == 10 and result.note.startswith("10 conversations or fewer")


def test_identical_models_never_differ() -> None:
    runs = pilot({"m/a": {"emotion": 0.5}}, conversations=30)
    twin = Runs(
        runs.runs,
        runs.records + tuple(r.model_copy(update={"model": "m/twin"}) for r in runs.records),
    )
    result = curve(twin, "m/a", "m/twin")
    assert result.needed is None and result.power == ()
    assert "never differ" in result.note


def test_power_is_seeded() -> None:
    runs = pilot({"m/a": {"emotion": 0.7}, "m/b": {"emotion": 0.5}}, conversations=30)
    first, again = curve(runs, "m/a", "m/b", seed=4), curve(runs, "m/a", "m/b", seed=4)
    assert first.power == again.power


def test_a_pilot_of_equal_models_names_no_number_of_conversations() -> None:
    # Planted truth: the two models are equally good; each pilot draws their answers anew.
    # The pilot's interval covers 0 in about 95% of pilots, and then no number is named.
    named = 0
    for seed in range(100):
        plan = Plan({"m/a": {"emotion": 0.6}, "m/b": {"emotion": 0.6}}, conversations=30, seed=seed)
        result = curve(synthetic.runs(plan), "m/a", "m/b")
        assert result.ci_low is not None and result.ci_high is not None
        if result.ci_low <= 0.0 <= result.ci_high:
            assert result.note.startswith("no detectable difference in the pilot")
            assert result.needed is None and result.power == ()
        named += result.needed is not None
    assert named <= 12  # 166 of 200 named one before


def test_a_pilot_with_too_few_conversations_says_so() -> None:
    runs = pilot({"m/a": {"emotion": 0.6}, "m/b": {"emotion": 0.5}}, conversations=1)
    assert "fewer than 2" in curve(runs, "m/a", "m/b").note


def centred(differences: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per-conversation sums of paired differences with the pilot's effect taken out."""
    centred: np.ndarray = differences - counts * differences.sum() / counts.sum()
    return centred


@pytest.mark.parametrize("unequal", [False, True], ids=["4 items each", "1 to 7 items"])
def test_type_one_error_is_at_most_six_percent_at_ten_conversations(unequal: bool) -> None:
    # A pilot of two models that answer alike (0/1 scores, accuracy 0.6 each) over 200
    # conversations, with no difference left: every rejection is a type I error.
    rng = np.random.default_rng(0)
    counts = rng.integers(1, 8, 200).astype(float) if unequal else np.full(200, 4.0)
    sums = [(rng.random((2, int(n))) < 0.6).sum(axis=1) for n in counts]
    differences = centred(np.array([a - b for a, b in sums], dtype=float), counts)
    size = simulated_power(differences, counts, 10, 100_000, 0.05, np.random.default_rng(1))
    assert 0.04 <= size <= 0.06


def test_the_size_holds_at_larger_studies() -> None:
    rng = np.random.default_rng(0)
    counts = np.full(200, 5.0)
    differences = centred(rng.normal(0, 1, 200), counts)
    size = simulated_power(differences, counts, 200, 4000, 0.05, np.random.default_rng(1))
    assert size == pytest.approx(0.05, abs=0.02)
