"""The one logistic regression (`stats.ridge_logistic`) against planted weights."""

from __future__ import annotations

import numpy as np

from attunebench.stats import ridge_logistic


def test_it_recovers_planted_weights_and_reads_a_tie_as_half() -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    x = np.column_stack([np.ones(n), rng.normal(size=n), rng.uniform(-1, 1, n)])
    planted = np.array([0.4, -1.2, 2.0])
    p = 1 / (1 + np.exp(-(x @ planted)))
    drawn = (rng.random(n) < p).astype(float)
    fitted = ridge_logistic(x, drawn, 1e-6)
    assert np.abs(fitted - planted).max() < 0.08  # about 5 standard errors (0.016 each)
    # A tie counted 0.5 weighs as half a win: the expected outcome itself gives the weights.
    assert np.abs(ridge_logistic(x, p, 1e-6) - planted).max() < 1e-6


def test_separated_outcomes_keep_finite_weights_that_still_separate() -> None:
    """The trap: with every outcome explained by the sign of x an unpenalised fit runs off to
    infinity (and every item's probability to 0 or 1); the ridge stops it."""
    x = np.column_stack([np.ones(40), np.linspace(-1, 1, 40)])
    y = (x[:, 1] > 0).astype(float)
    beta = ridge_logistic(x, y, 1e-3)
    assert np.isfinite(beta).all()
    assert ((x @ beta > 0) == (y > 0)).all()
    assert np.isfinite(ridge_logistic(x, np.ones(40), 1e-6)).all()  # all one way
