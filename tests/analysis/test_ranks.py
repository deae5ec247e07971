"""Rank agreement between tasks: scipy cross-checks, the three-way verdict, and planted truths
(models under test only; identical rankings with a noisy task are never "distinct";
independent rankings of reliable tasks are)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from attunebench.analysis.agreement.ranks import (
    MIN_DISTINCT_CONVERSATIONS,
    OF_RANKS,
    ceiling,
    correlate,
    disattenuated,
    kendall_tau_b,
    spearman_rho,
    verdict,
)
from attunebench.analysis.agreement.reliability import SplitHalf
from attunebench.analysis.bootstrap import percentile_interval
from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import Correlation, Summary
from attunebench.analysis.summary import Options, build_summary
from planted import synthetic
from planted.studies import Design, study_verdict
from planted.synthetic import Plan

FAST = Options(resamples=500, permutations=199, subgroup_permutations=100)
BASELINES = ("baseline/random", "baseline/majority", "baseline/knn")


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


def test_tau_b_permutation_test_on_whole_number_ranks_is_the_one_on_values() -> None:
    # Planted: tied scores of 11 models. The test ranks once and reads tau-b of twice the
    # ranks as small whole numbers: every permuted statistic, so the p-value, must be the one
    # the values give bit for bit, with the same draws; a known answer: tau-b 1 for one order.
    rng = np.random.default_rng(8)
    x = rng.integers(0, 5, size=11).astype(float)
    y = x + rng.normal(0, 2.0, size=11)
    xs, ys = x + rng.normal(0, 1, (50, 11)), y + rng.normal(0, 1, (50, 11))
    ranks = stats.rankdata(xs, axis=-1), stats.rankdata(ys, axis=-1)
    assert np.array_equal(OF_RANKS[kendall_tau_b](*ranks), kendall_tau_b(xs, ys), equal_nan=True)
    found = correlate(kendall_tau_b, x, y, xs, ys, 999, np.random.default_rng(3), 0.95)
    test = stats.permutation_test(
        (x, y),
        lambda a, b, axis: kendall_tau_b(np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)),
        permutation_type="pairings",
        vectorized=True,
        n_resamples=999,
        rng=np.random.default_rng(3),
    )
    assert found.p_value == float(test.pvalue) and found.value == float(test.statistic)
    ordered = correlate(kendall_tau_b, x, 3 * x, xs, ys, 999, np.random.default_rng(3), 0.95)
    assert ordered.value == 1.0 and ordered.p_value is not None and ordered.p_value < 0.01


def test_the_verdict_has_three_outcomes() -> None:
    def c(value: float, low: float, high: float) -> Correlation:
        return Correlation(value=value, ci_low=low, ci_high=high)

    fixed = c(0.5, 0.1, 1.2)  # reported beside the verdict, not deciding it (see `verdict`)
    assert verdict(c(0.1, -0.2, 0.4), c(0.95, 0.9, 0.98), fixed)[0] == "distinct"
    assert verdict(c(0.9, 0.7, 0.97), c(0.95, 0.9, 0.98), fixed)[0] == "agree"
    assert verdict(c(0.3, -0.2, 0.7), c(0.5, 0.1, 0.8), fixed)[0] == "cannot tell"
    unreliable = Correlation(value=None, reason="not reliable")
    found = verdict(c(0.1, -0.2, 0.4), unreliable, Correlation(value=None))
    assert found[0] == "cannot tell" and "the ceiling is too low: not reliable" in found[1]
    assert verdict(Correlation(value=None, reason="few"), c(0.9, 0.8, 1.0), fixed)[0] is None


def test_distinct_needs_enough_conversations_and_a_ceiling_above_zero() -> None:
    def c(value: float, low: float, high: float) -> Correlation:
        return Correlation(value=value, ci_low=low, ci_high=high)

    fixed = c(0.1, -0.3, 0.5)
    below = (c(0.1, -0.2, 0.4), c(0.95, 0.9, 0.98), fixed)
    assert verdict(*below, MIN_DISTINCT_CONVERSATIONS)[0] == "distinct"
    withheld = verdict(*below, MIN_DISTINCT_CONVERSATIONS - 1)
    assert withheld[0] == "cannot tell"
    assert f"distinct needs {MIN_DISTINCT_CONVERSATIONS} or more" in withheld[1]
    # rho wholly below 0 and a ceiling that reaches 0 (a task may rank at random): no verdict
    # of distinct, however many conversations
    assert verdict(c(-0.5, -0.8, -0.1), c(0.3, 0.0, 0.6), fixed, 500)[0] == "cannot tell"


def test_identical_rankings_are_rarely_distinct_in_simulated_studies() -> None:
    # Planted truth: 8 models in the same order on a reliable and a noisy task, 40
    # conversations (above the minimum, so the rule itself decides). benchmarks/validity.py
    # runs 1,000 studies per design; here 20, none of which may say distinct.
    rng = np.random.default_rng(11)
    design = Design("same order", 40, 8)
    found = [study_verdict(design, rng, resamples=500) for _ in range(20)]
    assert not any(reported == "distinct" for reported, _ in found)
    assert any(reported == "agree" for reported, _ in found)  # not a verdict that never speaks


def split(value: float, samples: list[float]) -> SplitHalf:
    return SplitHalf(value, np.array(samples), min(samples), max(samples))


def test_the_ceiling_is_the_root_of_the_product_and_never_from_negative_reliabilities() -> None:
    top, drawn = ceiling(split(0.81, [0.7, 0.9]), split(0.64, [0.5, 0.6]), 0.95)
    assert top.value == pytest.approx(0.72)
    np.testing.assert_allclose(drawn, np.sqrt([0.35, 0.54]))
    # a resample in which one task, or both, rank at random has no ceiling above 0
    _, drawn = ceiling(split(0.5, [-0.4, 0.5, -0.2]), split(0.5, [0.6, -0.5, -0.3]), 0.95)
    np.testing.assert_allclose(drawn, [0.0, 0.0, 0.0])
    top, _ = ceiling(split(-0.3, [-0.3]), split(-0.4, [-0.4]), 0.95)
    assert top.value is None and top.reason is not None


def test_an_interval_contains_its_estimate_at_the_edge_of_the_range() -> None:
    # Eight models ranked alike by both tasks: rho is 1, and no resample can exceed it; most
    # resamples reorder a few close models, so the percentile interval ends below 1 ("1.00
    # [0.86, 0.99]"). The interval is widened to the estimate, and only so far.
    x = np.arange(8.0)
    rng = np.random.default_rng(2)
    xs, ys = x + rng.normal(0, 1.2, (500, 8)), 2 * x + rng.normal(0, 2.4, (500, 8))
    low, high = percentile_interval(spearman_rho(xs, ys)[:, None], 0.95)
    assert high[0] < 1.0  # the bias
    found = correlate(spearman_rho, x, 2 * x, xs, ys, 99, rng, 0.95)
    assert found.value == 1.0 and found.ci_high == 1.0
    assert found.ci_low == pytest.approx(low[0])


def test_a_resample_with_no_ceiling_leaves_the_disattenuated_interval_open_above() -> None:
    rho = Correlation(value=0.3, ci_low=0.1, ci_high=0.5)
    top = Correlation(value=0.8, ci_low=0.5, ci_high=0.9)
    rho_drawn = np.linspace(0.1, 0.5, 100)
    ceilings = np.linspace(0.5, 0.9, 100)
    found = disattenuated(rho, rho_drawn, top, ceilings, 0.95)
    assert found.value == pytest.approx(0.375) and found.ci_high is not None
    ceilings[:10] = 0.0  # a task ranks at random in 10% of resamples: no ceiling there
    found = disattenuated(rho, rho_drawn, top, ceilings, 0.95)
    assert found.ci_high is None and found.ci_low is not None and found.reason
    assert found.ci_low <= 0.375


def ladder(order: Callable[[int], float], n: int = 6) -> dict[str, dict[str, float]]:
    """n models whose accuracy on `emotion` rises and on `preference` follows `order`."""
    return {f"m/model{i}": {"emotion": 0.2 + 0.12 * i, "preference": order(i)} for i in range(n)}


def only_pair(runs: Runs) -> dict[str, object]:
    summary = build_summary(runs, Options(resamples=400, permutations=2000))
    (pair,) = summary.rank_correlation.pairs
    return pair.model_dump()


def test_planted_agreement_is_found(load: Callable[..., Runs]) -> None:
    pair = only_pair(load(ladder(lambda i: 0.15 + 0.12 * i), conversations=60))
    assert pair["kendall_tau_b"]["value"] == pytest.approx(1.0)  # type: ignore[index]
    assert pair["kendall_tau_b"]["ci_low"] > 0.5  # type: ignore[index]
    assert pair["kendall_tau_b"]["p_value"] < 0.01  # type: ignore[index]
    assert pair["verdict"] == "agree"


def test_planted_opposition_is_distinct(load: Callable[..., Runs]) -> None:
    pair = only_pair(load(ladder(lambda i: 0.85 - 0.12 * i), conversations=60))
    assert pair["kendall_tau_b"]["value"] == pytest.approx(-1.0)  # type: ignore[index]
    assert pair["verdict"] == "distinct"


def test_models_that_do_not_differ_cannot_tell(load: Callable[..., Runs]) -> None:
    same = {f"m/model{i}": {"emotion": 0.5, "preference": 0.5} for i in range(6)}
    pair = only_pair(load(same, conversations=20, seed=3))
    assert pair["verdict"] == "cannot tell"


def test_the_same_resamples_feed_every_task() -> None:
    # Two tasks whose headline is the mean per-item score, with the same per-item scores: in
    # every resample both rank the models identically, so the interval collapses to 1.
    # Independent resamples per task would not.
    accuracy = {f"m/model{i}": {"response": 0.3 + 0.05 * i, "preference": 0.5} for i in range(5)}
    runs = synthetic.runs(Plan(accuracy, conversations=25))
    response = {
        (r.model, r.conversation_id, r.turn_index): r.score
        for r in runs.records
        if r.task == "response"
    }
    twins = tuple(
        r.model_copy(update={"score": response[r.model, r.conversation_id, r.turn_index]})
        if r.task == "preference"
        else r
        for r in runs.records
    )
    summary = build_summary(Runs(runs.runs, twins, runs.conversations), Options(resamples=300))
    (pair,) = summary.rank_correlation.pairs
    assert (pair.kendall_tau_b.ci_low, pair.kendall_tau_b.ci_high) == (1.0, 1.0)


def test_fewer_than_three_models_is_null_with_a_reason(load: Callable[..., Runs]) -> None:
    runs = load(ladder(lambda i: 0.3, n=2))
    summary = build_summary(runs, Options(resamples=100, permutations=99))
    correlation = summary.rank_correlation
    assert correlation.reason is not None and "fewer than 3 models" in correlation.reason
    (pair,) = correlation.pairs
    assert pair.kendall_tau_b.value is None and pair.verdict is None
    assert pair.verdict_text.startswith("not computed")


# --- planted truths --------------------------------------------------------------------------


def unrelated(models: int, tasks: tuple[str, ...], seed: int) -> dict[str, dict[str, float]]:
    """Accuracies from an independent random ranking per task, evenly spaced."""
    rng = np.random.default_rng([seed, 7])
    orders = {task: rng.permutation(models) for task in tasks}
    return {
        f"m/model{m:02d}": {task: 0.2 + 0.6 * orders[task][m] / (models - 1) for task in tasks}
        for m in range(models)
    }


def claims_of(summary: Summary) -> dict[str, object]:
    """Every number of the two claims, as JSON-like data."""
    rank = summary.rank_correlation.model_dump()
    return {
        "models": rank["models"],
        "pairs": rank["pairs"],
        "reliability": rank["reliability"],
        "discriminability": summary.discriminability.model_dump(),
    }


def test_adding_baselines_changes_no_statistic_of_the_models_under_test() -> None:
    tasks = ("emotion", "preference", "behavior")
    accuracy = unrelated(8, tasks, seed=1)
    for rank, name in enumerate(BASELINES):  # yardsticks below every model on every task
        accuracy[name] = {task: 0.05 + 0.03 * rank for task in tasks}
    plan = Plan(accuracy, conversations=40, items_per_conversation=3)
    everyone = synthetic.runs(plan)
    without = synthetic.runs(plan, models=[m for m in accuracy if m not in BASELINES])
    assert {r.model for r in everyone.records} > {r.model for r in without.records}
    options = Options(resamples=400, permutations=499)
    summary = build_summary(everyone, options)
    assert claims_of(summary) == claims_of(build_summary(without, options))
    assert not set(BASELINES) & set(summary.rank_correlation.models)
    assert all(len(p.models) == 8 for p in summary.rank_correlation.pairs)
    # the baselines are still reported, as yardsticks
    kinds = {r.model: (r.model_kind, r.subject) for r in summary.scores}
    assert all(kinds[name] == ("baseline", False) for name in BASELINES)
    # counted as models under test, the same records would manufacture agreement
    renamed = Runs(
        everyone.runs,
        tuple(
            r.model_copy(update={"model": "m/" + r.model}) if r.model in BASELINES else r
            for r in everyone.records
        ),
        everyone.conversations,
    )
    fooled = build_summary(renamed, options).rank_correlation.pairs
    for honest, inflated in zip(summary.rank_correlation.pairs, fooled, strict=True):
        assert inflated.kendall_tau_b.value is not None and honest.kendall_tau_b.value is not None
        assert inflated.kendall_tau_b.value > honest.kendall_tau_b.value + 0.15


def verdicts(plans: list[Plan]) -> Counter[str | None]:
    found: Counter[str | None] = Counter()
    for plan in plans:
        summary = build_summary(synthetic.runs(plan), replace(FAST, seed=plan.seed))
        (pair,) = summary.rank_correlation.pairs
        found[pair.verdict] += 1
    return found


@pytest.mark.slow
@pytest.mark.parametrize("step", [0.01, 0.015], ids=["very noisy", "noisy"])
def test_identical_rankings_with_a_noisy_task_are_never_distinct(step: float) -> None:
    # 11 models in the same true order on both tasks; one emotion item per conversation with
    # small gaps (a noisy ranking), four preference items with larger ones (a reliable one)
    plans = [
        Plan(
            {
                f"m/model{i:02d}": {"emotion": 0.5 + step * (i - 5), "preference": 0.3 + 0.04 * i}
                for i in range(11)
            },
            conversations=200,
            items={"emotion": 1, "preference": 4},
            items_per_conversation=1,
            seed=seed,
        )
        for seed in range(12)
    ]
    found = verdicts(plans)
    assert found["distinct"] == 0, found
    assert found["agree"] + found["cannot tell"] == len(plans)


@pytest.mark.slow
def test_independent_rankings_of_reliable_tasks_are_distinct() -> None:
    plans = [
        Plan(
            unrelated(11, ("emotion", "preference"), seed),
            conversations=200,
            items_per_conversation=4,
            seed=seed,
        )
        for seed in range(10)
    ]
    found = verdicts(plans)
    assert found["distinct"] >= 0.8 * len(plans), found
