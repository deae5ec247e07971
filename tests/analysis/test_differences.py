"""Two models' headlines compared on the same items: a planted difference is recovered with
the stated coverage, equal models give an interval around 0, neither a yardstick added nor a
difference asked about a yardstick can bend it, the interval is the paired one (narrower than
two independent bootstraps where the models' scores go together: the trap) and it is the
interval `power` states for its pilot."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, special, stats

from attunebench.analysis import Options, build_summary, power_curve
from attunebench.analysis.bootstrap import percentile_interval, resample_counts
from attunebench.analysis.comparisons.differences import headline_pair, report_cell
from attunebench.analysis.comparisons.power import Settings
from attunebench.analysis.frame import Frame
from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import ModelDifference, Summary
from planted import synthetic
from planted.synthetic import Plan

PAIR = (("m/a", "m/b"),)
FAST = Options(resamples=400, permutations=99, differences=PAIR)


def planted(accuracy: dict[str, float], seed: int, spread: float = 1.0) -> Runs:
    plan = Plan(
        {name: {"preference": value} for name, value in accuracy.items()},
        conversations=40,
        items={"preference": 4},
        conversation_spread=spread,
        seed=seed,
        kinds={name: "baseline" for name in accuracy if name.startswith("baseline/")},
    )
    return synthetic.runs(plan, sorted(accuracy))


def summarised(accuracy: dict[str, float], seed: int, options: Options = FAST) -> Summary:
    return build_summary(planted(accuracy, seed), options)


def true_difference(a: float, b: float, spread: float) -> float:
    """The planted difference of the mean score over conversations: each conversation's
    difficulty (normal, sd `spread`, logit scale) shifts both models' chance of being right."""

    def at(d: float) -> float:
        gap = special.expit(special.logit(a) + d) - special.expit(special.logit(b) + d)
        return float(gap * stats.norm.pdf(d, 0.0, spread))

    return float(integrate.quad(at, -10 * spread, 10 * spread)[0])


def difference(summary: Summary) -> ModelDifference:
    (found,) = [d for d in summary.differences if d.task == "preference" and d.b == "m/b"]
    return found


def test_a_planted_difference_is_recovered_within_its_interval() -> None:
    found = [difference(summarised({"m/a": 0.8, "m/b": 0.6}, seed)) for seed in range(12)]
    truth = true_difference(0.8, 0.6, 1.0)  # 0.178: the shared difficulty shrinks 0.2
    assert all(d.value is not None and 0.05 < d.value < 0.35 for d in found)
    covered = sum(
        d.ci_low is not None and d.ci_high is not None and d.ci_low <= truth <= d.ci_high
        for d in found
    )
    assert covered >= 10, covered  # 95% intervals: 11.4 of 12 expected
    first = found[0]
    assert first.value == first.a_value - first.b_value  # type: ignore[operator]


def test_equal_models_differ_by_an_interval_around_zero() -> None:
    found = [difference(summarised({"m/a": 0.7, "m/b": 0.7}, seed)) for seed in range(12)]
    apart = sum(d.ci_low is not None and d.ci_high is not None and not d.ci_low <= 0 <= d.ci_high
                for d in found)  # fmt: skip
    assert apart <= 2, apart  # about 5% expected


def test_a_yardstick_added_changes_nothing_and_is_never_compared() -> None:
    pairs = (("m/a", "m/b"), ("m/a", "baseline/strong"))
    options = Options(resamples=400, permutations=99, differences=pairs)
    alone = summarised({"m/a": 0.8, "m/b": 0.6}, 3, options)
    beside = summarised({"m/a": 0.8, "m/b": 0.6, "baseline/strong": 0.95}, 3, options)
    assert difference(alone) == difference(beside)
    (yardstick,) = [d for d in beside.differences if d.b == "baseline/strong"]
    assert yardstick.value is None and "baseline/strong" in (yardstick.reason or "")


def unpaired_width(runs: Runs, seed: int) -> float:
    """The width of the interval two independent bootstraps give (the trap): a's headline
    and b's each resampled with draws of their own."""
    frame = Frame.from_records(runs.records)
    cell = report_cell(runs, frame, "preference")
    assert cell is not None
    pair = headline_pair(frame, cell, "m/a", "m/b")
    assert pair is not None
    rng = np.random.default_rng(seed)
    draws = [resample_counts(pair.clusters, 400, rng).astype(np.float64) for _ in range(2)]
    drawn = pair.each(draws[0])[0] - pair.each(draws[1])[1]
    low, high = percentile_interval(drawn[:, None], 0.95, pair.clusters)
    return float(high[0] - low[0])


@pytest.mark.parametrize("spread", [0.0, 2.5])
def test_the_interval_is_the_paired_one_not_two_independent_bootstraps(spread: float) -> None:
    ratios = []
    for seed in range(4):
        runs = planted({"m/a": 0.75, "m/b": 0.6}, seed, spread)
        found = difference(build_summary(runs, FAST))
        assert found.ci_low is not None and found.ci_high is not None
        ratios.append((found.ci_high - found.ci_low) / unpaired_width(runs, seed))
    if spread == 0.0:  # independent models: pairing changes nothing
        assert 0.85 < np.mean(ratios) < 1.15, ratios
    else:  # a shared difficulty: the paired interval is much narrower
        assert np.mean(ratios) < 0.75, ratios


def test_the_report_states_the_interval_power_states_for_its_pilot() -> None:
    runs = planted({"m/a": 0.8, "m/b": 0.6}, 5)
    found = difference(build_summary(runs, Options(seed=7, resamples=300, differences=PAIR)))
    settings = Settings(sizes=(10, 100), simulations=50, resamples=50, pilot_resamples=300)
    curve = power_curve(
        runs, "preference", "m/a", "m/b", rng=np.random.default_rng(7), settings=settings
    )
    assert (curve.difference, curve.ci_low, curve.ci_high) == (
        found.value,
        found.ci_low,
        found.ci_high,
    )
    assert (found.n, found.n_clusters) == (160, 40)


def test_by_participant_both_models_draw_the_same_participants() -> None:
    runs = planted({"m/a": 0.8, "m/b": 0.6}, 2)
    people = {c.participant.id for c in runs.conversations.values() if c.participant}
    assert 1 < len(people) < 40  # some participants held several conversations
    options = Options(resamples=300, differences=PAIR, cluster="participant")
    summary = build_summary(runs, options)
    found = difference(summary)
    by_conversation = difference(build_summary(runs, FAST))
    assert found.n_clusters == len(people) and by_conversation.n_clusters == 40
    assert found.value == by_conversation.value
    assert found.ci_low is not None and found.ci_low < found.value < found.ci_high  # type: ignore[operator]


def test_too_few_conversations_give_the_difference_without_an_interval() -> None:
    plan = Plan({"m/a": {"preference": 0.8}, "m/b": {"preference": 0.6}}, conversations=6)
    found = difference(build_summary(synthetic.runs(plan), FAST))
    assert found.value is not None and found.ci_low is None and found.ci_high is None
    assert found.n_clusters == 6 and "fewer than 10" in (found.reason or "")
