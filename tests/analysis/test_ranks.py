"""Rank agreement between tasks: known cases, scipy cross-checks, shared resamples."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from attunebench.analysis.loading import Runs
from attunebench.analysis.ranks import kendall_tau_b, spearman_rho
from attunebench.analysis.summary import Options, build_summary


def test_tau_b_is_one_for_agreeing_and_minus_one_for_opposed_rankings() -> None:
    x = np.array([0.1, 0.4, 0.3, 0.9, 0.5])
    assert kendall_tau_b(x, x * 2 + 1) == pytest.approx(1.0)
    assert kendall_tau_b(x, -x) == pytest.approx(-1.0)
    assert spearman_rho(x, x**3) == pytest.approx(1.0)
    assert spearman_rho(x, -x) == pytest.approx(-1.0)


def test_vectorised_statistics_match_scipy_with_ties() -> None:
    rng = np.random.default_rng(4)
    x = rng.integers(0, 4, size=(20, 9)).astype(float)
    y = rng.integers(0, 4, size=(20, 9)).astype(float)
    taus, rhos = kendall_tau_b(x, y), spearman_rho(x, y)
    for row in range(20):
        assert taus[row] == pytest.approx(stats.kendalltau(x[row], y[row]).statistic)
        assert rhos[row] == pytest.approx(stats.spearmanr(x[row], y[row]).statistic)


def ladder(step: float, order: Callable[[int], float], n: int = 6) -> dict[str, dict[str, float]]:
    """n models whose accuracy on `emotion` rises by `step` and on `preference` follows `order`."""
    return {
        f"m/model{i}": {"emotion": 0.2 + step * i, "preference": order(i)} for i in range(n)
    }


def pair_of(runs: Runs) -> dict[str, object]:
    summary = build_summary(runs, Options(resamples=400, permutations=2000))
    (pair,) = summary.rank_correlation.pairs
    return pair.model_dump()


def test_planted_agreement_is_found(load: Callable[..., Runs]) -> None:
    pair = pair_of(load(ladder(0.12, lambda i: 0.15 + 0.12 * i), conversations=60))
    assert pair["kendall_tau_b"]["value"] == pytest.approx(1.0)
    assert pair["kendall_tau_b"]["ci_low"] > 0.5
    assert pair["kendall_tau_b"]["p_value"] < 0.01
    assert str(pair["verdict"]).startswith("rankings agree")


def test_planted_opposition_is_found(load: Callable[..., Runs]) -> None:
    pair = pair_of(load(ladder(0.12, lambda i: 0.85 - 0.12 * i), conversations=60))
    assert pair["kendall_tau_b"]["value"] == pytest.approx(-1.0)
    assert str(pair["verdict"]).startswith("rankings are opposed")


def test_models_that_do_not_differ_give_no_evidence(load: Callable[..., Runs]) -> None:
    pair = pair_of(load(ladder(0.0, lambda i: 0.5), conversations=20, seed=3))
    assert str(pair["verdict"]).startswith(("no evidence of agreement", "not computed"))


def test_the_same_resamples_feed_every_task(make_run: Callable[..., object]) -> None:
    # Two tasks with identical records: in every resample both rank the models identically,
    # so the interval collapses to 1. Independent resamples per task would spread it.
    from attunebench.analysis.loading import load_runs

    accuracy = {f"m/model{i}": {"emotion": 0.3 + 0.05 * i} for i in range(5)}
    runs = load_runs([make_run(accuracy, conversations=25)])  # type: ignore[list-item]
    twins = runs.records + tuple(r.model_copy(update={"task": "emotion2"}) for r in runs.records)
    summary = build_summary(Runs(runs.runs, twins, runs.conversations), Options(resamples=300))
    (pair,) = summary.rank_correlation.pairs
    assert (pair.kendall_tau_b.ci_low, pair.kendall_tau_b.ci_high) == (1.0, 1.0)


def test_fewer_than_three_models_is_null_with_a_reason(load: Callable[..., Runs]) -> None:
    summary = build_summary(load(ladder(0.1, lambda i: 0.3, n=2)), Options(resamples=100))
    correlation = summary.rank_correlation
    assert correlation.reason is not None and "fewer than 3 models" in correlation.reason
    (pair,) = correlation.pairs
    assert pair.kendall_tau_b.value is None and pair.verdict.startswith("not computed")
