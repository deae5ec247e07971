"""Power calibrated on a planted pair: the headlines of two synthetic models differ by a known
+0.13 to +0.16; the report's own test of that difference reaches 80% power at a size found by
simulated studies, and pilots of 30 conversations state ranges that hold it (the trap: a
pilot that named a figure only when its own difference was significant overshot, so it was
optimistic exactly when it spoke)."""

from __future__ import annotations

import numpy as np

from attunebench.analysis import power_studies
from attunebench.analysis.power import Settings

PILOT = Settings(sizes=(10, 30, 100, 300, 1000, 5000), simulations=100, resamples=100)


def test_pilots_of_a_planted_pair_state_ranges_that_hold_its_true_n80() -> None:
    (pair,) = power_studies.population(0, 800, ("emotion",)).values()
    # the planted headline difference (macro-F1): about +0.14 (2,000 conversations: +0.142),
    # and 800 conversations hold it give or take 0.025
    assert 0.09 <= pair.point() <= 0.19
    rng = np.random.default_rng(1)
    known = power_studies.truth(pair, 60, rng, sizes=(100, 150, 200, 300, 400))
    assert known.n80 is not None and 100 <= known.n80 <= 400
    curves = power_studies.pilots(pair, 8, PILOT, rng)
    held = sum(power_studies.holds(c, known.n80) for c in curves)
    assert held >= 6, [c.range for c in curves]
    named = [c.needed for c in curves if c.needed is not None]
    assert len(named) == len(curves)  # every pilot names a central figure, significant or not
    assert known.n80 / 2 <= float(np.median(named)) <= known.n80 * 2
    silent = [c for c in curves if c.ci_low is not None and c.ci_low <= 0.0]
    assert all(c.needed_high is None and c.needed is not None for c in silent)
