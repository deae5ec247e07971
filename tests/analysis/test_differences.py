"""Two models' headlines compared on the same items: a planted difference is recovered with
the stated coverage, equal models give an interval around 0, and neither a yardstick added nor
a difference asked about a yardstick can bend it."""

from __future__ import annotations

from attunebench.analysis import Options, build_summary, synthetic
from attunebench.analysis.schema import ModelDifference, Summary
from attunebench.analysis.synthetic import Plan

FAST = Options(resamples=400, permutations=99, differences=(("m/a", "m/b"),))


def summarised(accuracy: dict[str, float], seed: int, options: Options = FAST) -> Summary:
    plan = Plan(
        {name: {"preference": value} for name, value in accuracy.items()},
        conversations=40,
        items={"preference": 4},
        conversation_spread=1.0,
        seed=seed,
        kinds={name: "baseline" for name in accuracy if name.startswith("baseline/")},
    )
    return build_summary(synthetic.runs(plan, sorted(accuracy)), options)


def difference(summary: Summary) -> ModelDifference:
    (found,) = [d for d in summary.differences if d.task == "preference" and d.b == "m/b"]
    return found


def test_a_planted_difference_is_recovered_within_its_interval() -> None:
    found = [difference(summarised({"m/a": 0.8, "m/b": 0.6}, seed)) for seed in range(12)]
    assert all(d.value is not None and 0.05 < d.value < 0.35 for d in found)
    covered = sum(
        d.ci_low is not None and d.ci_high is not None and d.ci_low <= 0.2 <= d.ci_high
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
