"""The judge-panel statistics on planted verdict tables: Krippendorff's alpha against the
`krippendorff` package, the length slope, the length-controlled win rate, and the coverage of
prediction-powered inference across seeds (the judges' own estimate must fail it)."""

from __future__ import annotations

from typing import Any

import krippendorff
import numpy as np
import pytest

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.judges.bias import judge_bias
from attunebench.analysis.judges.corrected import corrected_estimate
from attunebench.analysis.judges.length_control import length_controlled, logistic_fit
from attunebench.analysis.judges.panel import coincidences, judge_panel, nominal_alpha, vote_counts
from attunebench.analysis.judges.verdict_table import AUDIT, JUDGED, NONE, VerdictTable, table_of
from attunebench.analysis.sums import mean
from attunebench.records import ModelInfo


def tools(conversations: int, seed: int = 0, resamples: int = 1000) -> tuple[Any, Minimum]:
    codes = np.arange(conversations)
    rng = np.random.default_rng(seed)
    return ClusterBootstrap.create(codes, resamples, rng), Minimum(5, "conversation", codes)


def rated(picks: np.ndarray[Any, Any], per_conversation: int = 4) -> VerdictTable:
    """A table from a (judges x units) matrix of picks (NONE: missing), one order each."""
    rows, conversations = [], []
    for j, row in enumerate(picks):
        for u, pick in enumerate(row):
            rows.append((f"j{j}", AUDIT, "", u, 0, int(pick), 0, (10, 10), (None, None)))
            conversations.append(u // per_conversation)
    return table_of(rows, conversations)


def hand_alpha(table: VerdictTable) -> float:
    counts, _, _ = vote_counts(table, np.ones(len(table.pick), dtype=bool))
    values, _ = coincidences(counts)
    return float(nominal_alpha(values.sum(axis=0)))


@pytest.mark.parametrize("seed", range(5))
def test_alpha_matches_the_krippendorff_package(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, 60)
    picks = np.where(rng.random((3, 60)) < 0.7, truth, rng.integers(0, 3, (3, 60)))
    picks[rng.random((3, 60)) < 0.15] = NONE  # missing verdicts
    expected = krippendorff.alpha(
        reliability_data=np.where(picks == NONE, np.nan, picks), level_of_measurement="nominal"
    )
    assert hand_alpha(rated(picks)) == pytest.approx(expected, abs=1e-12)


def test_alpha_is_one_for_identical_judges_and_near_zero_for_independent_ones() -> None:
    rng = np.random.default_rng(1)
    same = np.tile(rng.integers(0, 3, 200), (3, 1))
    assert hand_alpha(rated(same)) == pytest.approx(1.0)
    independent = rng.integers(0, 3, (3, 200))
    bootstrap, minimum = tools(50)
    panel = judge_panel(rated(independent), bootstrap, minimum)
    assert panel is not None and panel.alpha.ci_low is not None
    assert panel.alpha.ci_low < 0.0 < panel.alpha.ci_high  # type: ignore[operator]


def response_table(
    x: np.ndarray[Any, Any], wins: np.ndarray[Any, Any], conversations: np.ndarray[Any, Any]
) -> VerdictTable:
    """One judge's response verdicts: the model's reply (length 100 * 2**x) against a
    reference of length 100; `wins` 1 names the model's reply."""
    rows = []
    for i, (ratio, won) in enumerate(zip(x, wins, strict=True)):
        lengths = (100 * 2.0**ratio, 100.0)
        pick = 0 if won else 1
        rows.append(("j", JUDGED, "", i, 0, pick, NONE, lengths, ("m", None)))
    return table_of(rows, list(conversations))


def test_length_slope_recovers_a_planted_slope() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, 4000)
    wins = rng.random(4000) < 0.5 + 0.2 * x  # a doubling of length: +0.2 win rate
    bootstrap, minimum = tools(400)
    found = judge_bias(response_table(x, wins, np.arange(4000) // 10), {}, bootstrap, minimum)
    slope = found["j"].length_slope
    assert slope.ci_low is not None and slope.ci_low <= 0.2 <= slope.ci_high  # type: ignore[operator]
    assert slope.ci_low > 0.1


def test_length_controlled_win_rate_removes_a_length_advantage() -> None:
    rng = np.random.default_rng(3)
    n = 3000
    x = rng.uniform(0.0, 1.5, n)  # the model writes longer replies
    d = (2.0**x - 1) / (2.0**x + 1)  # the normalised length difference
    wins = rng.random(n) < 1 / (1 + np.exp(-(0.0 + 3.0 * d)))  # equal length: 0.5
    bootstrap, minimum = tools(300)
    table = response_table(x, wins, np.arange(n) // 10)
    found = length_controlled(table, "m", bootstrap, minimum)
    assert found.ci_low is not None and found.ci_low <= 0.5 <= found.ci_high  # type: ignore[operator]
    assert wins.mean() > 0.65  # the raw win rate is far from it


def ppi_draw(seed: int, bias: float) -> tuple[bool, bool]:
    """One planted study: true win rate 0.4; the judge turns a non-win into a win with
    probability `bias` on every item; participants judged 150 of 1200 items (audited pairs in
    their own conversations). Does each interval cover 0.4?"""
    rng = np.random.default_rng(seed)
    truth, n_judged, n_audited = 0.4, 1200, 150
    people = (rng.random(n_judged + n_audited) < truth).astype(float)
    judged = np.where(rng.random(len(people)) < bias, 1.0, people)
    conversations = np.arange(len(people)) // 5
    bootstrap, minimum = tools(int(conversations.max()) + 1, seed, 500)
    where_u, where_l = conversations[:n_judged], conversations[n_judged:]
    corrected = corrected_estimate(
        bootstrap,
        minimum,
        judged[:n_judged],
        where_u,
        judged[n_judged:] - people[n_judged:],
        where_l,
    )
    alone = mean(bootstrap, minimum, judged[:n_judged], where_u, "none")

    def covers(e: Any) -> bool:
        return bool(e.ci_low <= truth <= e.ci_high)

    return covers(corrected), covers(alone)


def test_corrected_interval_covers_the_truth_at_its_nominal_rate() -> None:
    draws = [ppi_draw(seed, bias=0.2) for seed in range(150)]
    corrected = np.mean([c for c, _ in draws])
    alone = np.mean([a for _, a in draws])
    assert 0.89 <= corrected <= 0.99, corrected  # nominal 0.95
    assert alone < 0.05, alone  # the judges' own interval is centred on the wrong value


def test_the_one_step_interval_matches_refitting_every_resample() -> None:
    rng = np.random.default_rng(4)
    n = 800
    x = rng.uniform(-0.5, 1.5, n)
    d = (2.0**x - 1) / (2.0**x + 1)
    wins = rng.random(n) < 1 / (1 + np.exp(-(0.3 + 2.0 * d)))
    conversations = np.arange(n) // 8
    bootstrap, minimum = tools(100, resamples=400)
    found = length_controlled(response_table(x, wins, conversations), "m", bootstrap, minimum)
    refitted = []
    for counts in bootstrap.counts:
        weights = counts[conversations]
        keep = np.repeat(np.arange(n), weights.astype(int))
        beta = logistic_fit(d[keep], wins[keep].astype(float))
        refitted.append(1 / (1 + np.exp(-beta[0])))
    low, high = np.percentile(refitted, [2.5, 97.5])
    assert found.ci_low == pytest.approx(low, abs=0.01)
    assert found.ci_high == pytest.approx(high, abs=0.01)


def test_a_judge_that_sides_with_the_people_shows_no_self_preference() -> None:
    """The trap: its family's model is simply good (participants pick it 80% of the time), and
    a judge naming the participants' pick must not be called biased for agreeing."""
    rng = np.random.default_rng(5)
    rows, conversations = [], []
    for u in range(400):
        truth = 0 if rng.random() < 0.8 else 1  # the first reply, by "fam-1", mostly wins
        for order in (0, 1):
            authors = ("fam-1", "other")
            rows.append(("j", AUDIT, "informed", u, order, truth, truth, (50, 60), authors))
            conversations.append(u // 4)
    info = {"j": ModelInfo(spec="sim/judge", name="j", role="judge", family="fam")}
    info["fam-1"] = ModelInfo(spec="sim/oracle", name="fam-1", family="fam")
    bootstrap, minimum = tools(100)
    found = judge_bias(table_of(rows, conversations), info, bootstrap, minimum)
    (preference,) = found["j"].self_preference
    assert preference.relation == "family" and preference.bias.value == 0.0
    assert preference.participant_win_rate == pytest.approx(0.8, abs=0.05)
    assert preference.statement is None
