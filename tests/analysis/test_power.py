"""Power by resampling a pilot: a planted gap needs few conversations, no gap is never enough."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from attunebench.analysis.frame import Frame
from attunebench.analysis.loading import Runs
from attunebench.analysis.power import PowerCurve, power_curve, simulated_power


def curve(runs: Runs, a: str, b: str, task: str = "emotion", seed: int = 0) -> PowerCurve:
    return power_curve(Frame.from_records(runs.records), task, a, b, simulations=300,
                       rng=np.random.default_rng(seed))  # fmt: skip


def test_a_large_gap_is_reached_early_and_power_rises(load: Callable[..., Runs]) -> None:
    runs = load({"m/a": {"emotion": 0.8}, "m/b": {"emotion": 0.4}}, conversations=30)
    result = curve(runs, "m/a", "m/b")
    assert result.needed is not None and result.needed <= 50
    powers = result.power
    assert powers[-1] == 1.0 and powers[0] <= powers[-1]


def test_identical_models_are_never_separated(load: Callable[..., Runs]) -> None:
    runs = load({"m/a": {"emotion": 0.5}}, conversations=30)
    twin = Runs(runs.runs, runs.records + tuple(
        r.model_copy(update={"model": "m/twin"}) for r in runs.records if r.model == "m/a"))
    result = curve(twin, "m/a", "m/twin")
    assert result.needed is None
    assert "not enough" in result.note
    assert max(result.power) == 0.0


def test_power_is_seeded(load: Callable[..., Runs]) -> None:
    runs = load({"m/a": {"emotion": 0.6}, "m/b": {"emotion": 0.5}}, conversations=30)
    first, again = curve(runs, "m/a", "m/b", seed=4), curve(runs, "m/a", "m/b", seed=4)
    assert first.power == again.power


def test_wald_test_holds_its_size_when_there_is_no_effect() -> None:
    rng = np.random.default_rng(0)
    counts = np.full(200, 5.0)
    differences = rng.normal(0, 1, 200)
    differences -= differences.mean() * counts / counts.mean()  # the pilot's effect is zero
    size = simulated_power(differences, counts, 200, 4000, 0.05, np.random.default_rng(1))
    assert size == pytest.approx(0.05, abs=0.02)


def test_a_pilot_with_too_few_conversations_says_so(load: Callable[..., Runs]) -> None:
    runs = load({"m/a": {"emotion": 0.6}, "m/b": {"emotion": 0.5}}, conversations=1)
    assert "fewer than 2" in curve(runs, "m/a", "m/b").note
