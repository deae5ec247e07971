"""Discriminability as signal to noise: the ANOVA by hand, the resample weights, the
conversations needed, and planted truths (a known ratio between tasks is covered by its
interval; snr is per conversation and snr_per_item per item)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from attunebench.analysis.agreement.discriminability import (
    NEEDED_CONSTANT,
    needed,
    ranked,
    ratios,
    snr_of,
)
from attunebench.analysis.bootstrap import interval_with_infinity
from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import Discriminability, Estimate, Summary
from attunebench.analysis.summary import Options, build_summary, summary_json
from planted import synthetic
from planted.synthetic import Plan

FAST = Options(resamples=1000, permutations=99, subgroup_permutations=50)


def anova_snr(table: np.ndarray) -> float:
    """Two-way ANOVA without replication (conversations x models), by the textbook sums."""
    conversations, models = table.shape
    grand = table.mean()
    rows, columns = table.mean(axis=1, keepdims=True), table.mean(axis=0, keepdims=True)
    ms_models = conversations * ((columns - grand) ** 2).sum() / (models - 1)
    residual = table - rows - columns + grand
    ms_error = (residual**2).sum() / ((models - 1) * (conversations - 1))
    return float((ms_models - ms_error) / conversations / ms_error)


def test_snr_is_the_two_way_anova_ratio() -> None:
    rng = np.random.default_rng(0)
    table = rng.normal(size=(30, 5)) + np.linspace(0, 1, 5) + rng.normal(size=(30, 1))
    assert snr_of(table, np.ones((1, 30)))[0] == pytest.approx(anova_snr(table))


def test_resample_weights_equal_the_conversations_repeated() -> None:
    rng = np.random.default_rng(1)
    table = rng.normal(size=(12, 4)) + np.arange(4)
    counts = rng.multinomial(12, np.full(12, 1 / 12), size=3).astype(float)
    for row in counts:
        repeated = np.repeat(table, row.astype(int), axis=0)
        assert snr_of(table, row[None])[0] == pytest.approx(anova_snr(repeated))


def test_conversations_needed_follow_the_normal_approximation() -> None:
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    gap = stats.norm.ppf(0.75) * math.sqrt(2.0)  # median |difference| of two effects, var(a)=1
    assert z**2 * 2 / gap**2 == pytest.approx(NEEDED_CONSTANT, rel=1e-4)
    assert needed(NEEDED_CONSTANT / 40) == 40
    assert needed(NEEDED_CONSTANT / 40.5) == 41
    assert needed(100.0) == 2  # a paired test needs two conversations at the least
    assert needed(0.0) is None and needed(-0.1) is None and needed(float("nan")) is None


def entry(task: str, snr: float | None) -> Discriminability:
    return Discriminability(
        task=task,
        variant="",
        metric="score",
        models=["a", "b"],
        snr=Estimate(value=snr),
        conversations_needed=needed(snr) if snr is not None else None,
        items_per_conversation=1.0,
        snr_per_item=snr,
        items_needed=None,
        separability=None,
        spread=None,
        mean_ci_width=None,
        spread_over_noise=None,
        rank=None,
    )


def test_ratios_open_where_a_resample_does_not_separate_and_need_positive_snr() -> None:
    drawn = {"a": np.array([0.1, 0.2, -0.1, 0.2]), "b": np.array([0.2, 0.2, 0.2, 0.4])}
    (ratio,) = ratios([entry("a", 0.15), entry("b", 0.3)], drawn, 0.5, {})
    assert ratio.value == pytest.approx(2.0)  # a needs twice b's conversations
    assert ratio.ci_high is None  # one resample in which a's models do not differ: unbounded
    assert ratio.statement.startswith("a needs 2.00x [")
    (none,) = ratios([entry("a", -0.01), entry("b", 0.3)], drawn, 0.95, {})
    assert none.value is None and none.reason


def test_uncomputable_tasks_come_last_unranked() -> None:
    order = ranked([entry("c", None), entry("b", 0.1), entry("a", 0.4)])
    assert [(e.task, e.rank) for e in order] == [("a", 1), ("b", 2), ("c", None)]


# --- planted truths --------------------------------------------------------------------------

MODELS = 6
ITEMS = {"emotion": 1, "preference": 4}
NOISE = {"emotion": 0.3, "preference": 0.4}
EFFECTS = {"emotion": 0.05 * np.arange(MODELS), "preference": 0.05 * np.arange(MODELS)[::-1]}


def structure(conversations: int, items: Mapping[str, int]) -> Runs:
    """Records of every model on every item (no failures), whose scores are replaced below."""
    accuracy = {f"m/model{m}": {task: 0.5 for task in items} for m in range(MODELS)}
    plan = Plan(accuracy, conversations=conversations, items=items, items_per_conversation=1)
    return synthetic.runs(plan)


def planted(
    base: Runs,
    effects: Mapping[str, np.ndarray],
    noise: Mapping[str, float],
    rng: np.random.Generator,
) -> Runs:
    """Per-item scores y = a_m + b_c + e: a model effect, a conversation effect shared by every
    model (which the paired design cancels) and per-item noise."""
    codes = {c: i for i, c in enumerate(sorted(base.conversations))}
    shared = {task: rng.normal(0.0, 0.3, len(codes)) for task in effects}
    records = tuple(
        r.model_copy(
            update={
                "score": float(
                    effects[r.task][int(r.model.removeprefix("m/model"))]
                    + shared[r.task][codes[r.conversation_id]]
                    + rng.normal(0.0, noise[r.task])
                )
            }
        )
        for r in base.records
    )
    return Runs(base.runs, records, base.conversations)


def planted_snr(task: str, items: Mapping[str, int] = ITEMS) -> float:
    """var(a) over the noise of a conversation's mean. The ANOVA estimates the spread of these
    very models' effects, so var(a) is their sample variance (M - 1 denominator)."""
    return float(np.var(EFFECTS[task], ddof=1) / (NOISE[task] ** 2 / items[task]))


def by_task(summary: Summary) -> dict[str, Discriminability]:
    return {d.task: d for d in summary.discriminability.tasks}


@pytest.mark.slow
def test_the_planted_ratio_lies_in_its_interval_in_nine_of_ten_seeds() -> None:
    truth = planted_snr("preference") / planted_snr("emotion")  # emotion needs 2.25x
    base = structure(200, ITEMS)
    covered, seeds = 0, 50
    for seed in range(seeds):
        runs = planted(base, EFFECTS, NOISE, np.random.default_rng([seed, 5]))
        summary = build_summary(runs, replace(FAST, seed=seed))
        (ratio,) = summary.discriminability.ratios
        assert (ratio.task_a, ratio.task_b) == ("emotion", "preference")
        assert ratio.ci_low is not None and ratio.value is not None
        covered += ratio.ci_low <= truth <= (ratio.ci_high or math.inf)
    assert covered >= 0.9 * seeds, f"covered in {covered} of {seeds}"


def test_snr_is_per_conversation_and_snr_per_item_per_item() -> None:
    # The same model effects and the same noise per item; preference has four items per
    # conversation, so a conversation's mean is four times less noisy.
    items = {"emotion": 1, "preference": 4}
    effects = {task: 0.06 * np.arange(MODELS) for task in items}
    noise = {task: 0.35 for task in items}
    runs = planted(structure(400, items), effects, noise, np.random.default_rng(3))
    summary = build_summary(runs, FAST)
    found = by_task(summary)
    per_item = float(np.var(effects["emotion"], ddof=1) / 0.35**2)
    for task, k in items.items():
        d = found[task]
        assert d.items_per_conversation == k
        assert d.snr.value is not None and d.snr_per_item is not None
        assert d.snr_per_item == pytest.approx(d.snr.value / k)
        assert d.snr.ci_low is not None and d.snr.ci_high is not None
        assert d.snr.ci_low < k * per_item < d.snr.ci_high
        assert d.conversations_needed == needed(d.snr.value)
        assert d.items_needed == math.ceil(d.conversations_needed * k)  # type: ignore[operator]
    (ratio,) = summary.discriminability.ratios
    assert ratio.ci_low is not None and ratio.ci_high is not None
    assert ratio.ci_low < 4.0 < ratio.ci_high  # emotion needs four times the conversations
    # ... only because it has a quarter of the items: per item, the tasks are alike
    assert (ratio.items_per_conversation_a, ratio.items_per_conversation_b) == (1.0, 4.0)
    assert ratio.per_item == pytest.approx(ratio.value / 4.0)
    assert ratio.per_item_ci_low is not None and ratio.per_item_ci_high is not None
    assert ratio.per_item_ci_low < 1.0 < ratio.per_item_ci_high < 2.0
    assert "with 1.0 against 4.0 items per conversation; per item, " in ratio.statement
    assert f"per item, {ratio.per_item:.2f}x [" in ratio.statement
    assert [d.task for d in summary.discriminability.tasks] == ["preference", "emotion"]
    # separability is kept beside it
    assert all(d.separability is not None for d in found.values())


def test_identical_models_do_not_separate() -> None:
    runs = planted(
        structure(100, {"emotion": 2}),
        {"emotion": np.zeros(MODELS)},
        {"emotion": 0.3},
        np.random.default_rng(4),
    )
    (d,) = build_summary(runs, FAST).discriminability.tasks
    assert d.snr.value is not None and d.snr.value < 0.02
    assert d.snr.ci_low is not None and d.snr.ci_low < 0
    if d.snr.value <= 0:
        assert d.conversations_needed is None and d.reason


def test_a_ratio_end_is_unbounded_only_when_that_quantile_is_infinite() -> None:
    # 41 resamples, so the 97.5% point is exactly the 40th smallest value. In one resample
    # (2.4%) a's models do not differ: its ratio is infinite, the 41st value. The upper end is
    # then finite; numpy's interpolation gave 0 x infinity = NaN, shown as "unbounded".
    a = np.r_[np.linspace(0.1, 0.2, 40), -0.05]
    b = np.full(41, 0.2)
    (ratio,) = ratios([entry("a", 0.15), entry("b", 0.2)], {"a": a, "b": b}, 0.95, {})
    finite = np.sort(0.2 / a[:40])
    assert ratio.ci_high == pytest.approx(finite[39])
    assert ratio.ci_low == pytest.approx(np.percentile(finite, 2.5 * 40 / 39))  # order stat. 1
    assert ratio.reason is None and "unbounded" not in ratio.statement
    # three resamples (7%) in which a's models do not differ: more than 2.5%, so it is open
    (ratio,) = ratios(
        [entry("a", 0.15), entry("b", 0.2)], {"a": np.r_[a[:38], -a[:3]], "b": b}, 0.95, {}
    )
    assert ratio.ci_high is None and ratio.ci_low is not None
    assert ratio.reason is not None and "in 3 of 41 resamples (7.3%" in ratio.reason
    # in nearly every resample: both ends are infinite, never an accidental NaN
    (ratio,) = ratios([entry("a", 0.15), entry("b", 0.2)], {"a": -a, "b": b}, 0.95, {})
    assert ratio.ci_low is None and ratio.ci_high is None
    assert ratio.reason is not None and "in 40 of 41 resamples" in ratio.reason
    assert interval_with_infinity(np.r_[np.full(40, np.inf), 1.0], 0.95) == (np.inf, np.inf)


@pytest.mark.parametrize("spread", [0.0, 0.05], ids=["models-alike", "models-apart"])
def test_models_that_score_alike_on_every_conversation_get_no_snr_and_no_nan(
    spread: float,
) -> None:
    """No noise left once conversations are removed (two real models scoring the same on a
    judged task's two conversations did this): the snr is 0/0 or x/0. It is reported as
    missing with its reason, ranked last, in no ratio, and the summary stays valid JSON."""
    effects = {task: spread * np.arange(MODELS) for task in ITEMS}
    runs = planted(structure(12, ITEMS), effects, {"emotion": 0.3, "preference": 0.0}, RNG())
    summary = build_summary(runs, FAST)
    found = by_task(summary)
    alike = found["preference"]  # its headline is the per-item score planted here
    assert alike.snr.value is None and alike.snr_per_item is None
    assert alike.snr.reason is not None and "no residual variation" in alike.snr.reason
    assert alike.rank is None and found["emotion"].snr.value is not None
    (ratio,) = summary.discriminability.ratios
    assert ratio.value is None and ratio.per_item is None
    summary_json(summary)  # refuses NaN: must not raise


def RNG() -> np.random.Generator:
    return np.random.default_rng(11)
