"""A simulator run once per seed, read as one model (`analysis.comparisons.rollouts`).

Planted truth: the rollouts of one planted model (its accuracy, shifted by each conversation's
difficulty that every rollout shares) pooled into one headline whose interval covers the
model's headline on a large sample. The traps: rollouts that are copies of one another add no
information (the interval resamples conversations, never rollouts, so it is no narrower than
one rollout's), and rollouts are never counted as several models under test in the ranks.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attunebench.analysis.comparisons.rollouts import simulator_rollouts
from attunebench.analysis.loading import Runs
from attunebench.analysis.provenance import rollout_seeds
from attunebench.analysis.resampled import Resampler
from attunebench.analysis.summary import Options, build_summary
from attunebench.records import ItemRecord
from attunebench.report.render import render_html, render_markdown
from planted.synthetic import Plan, runs

SIMULATOR = "m/person"
ACCURACY = 0.7
TASK = "emotion"


def rollout(seed: int) -> str:
    return f"{SIMULATOR}?seed={seed}"


def seeded(found: Runs) -> Runs:
    """The runs with each rollout's seed in its parameters, as the engine records them."""
    run = found.runs[0]
    models = [
        m.model_copy(update={"name": m.spec, "params": {"seed": int(m.spec.rpartition("=")[2])}})
        if "?seed=" in m.spec
        else m
        for m in run.info.models
    ]
    info = run.info.model_copy(update={"models": models})
    return Runs((dataclasses.replace(run, info=info),), found.records, found.conversations)


def planted(conversations: int, rollouts: int, seed: int, **others: float) -> Runs:
    accuracy = {rollout(s): {TASK: ACCURACY} for s in range(rollouts)}
    accuracy |= {name: {TASK: value} for name, value in others.items()}
    plan = Plan(accuracy, conversations=conversations, conversation_spread=1.0, seed=seed)
    return seeded(runs(plan))


def pooled_figure(
    found: Runs, resamples: int = 400, seeds: dict[str, int] | None = None
) -> tuple[float, float, float]:
    """The simulator's pooled headline with its interval (`seeds`: its rollouts, else all)."""
    resampler = Resampler.over(list(found.conversations), resamples, seed=0)
    seeds = seeds or next(iter(rollout_seeds(found).values()))
    figure = simulator_rollouts(found, seeds, resampler).figures[TASK]
    assert figure.value is not None and figure.ci_low is not None and figure.ci_high is not None
    return figure.value, figure.ci_low, figure.ci_high


@pytest.fixture(scope="module")
def truth() -> float:
    """The planted model's headline on a large sample (its many rollouts together)."""
    return pooled_figure(planted(1500, 4, seed=99), resamples=100)[0]


def test_the_pooled_interval_covers_the_planted_truth(truth: float) -> None:
    found = [pooled_figure(planted(40, 3, seed=s)) for s in range(12)]
    covered = sum(low <= truth <= high for _, low, high in found)
    assert covered >= 10, (truth, found)
    # And the headline is the planted model's, not a rollout's chance: near the truth on average.
    assert np.mean([value for value, _, _ in found]) == pytest.approx(truth, abs=0.05)


def copies(found: Runs, count: int) -> Runs:
    """The first rollout's records again under `count` rollouts' names: one answer, repeated."""
    first = [r for r in found.records if r.model == rollout(0)]
    copied: list[ItemRecord] = [
        r.model_copy(update={"model": rollout(s)}) for s in range(count) for r in first
    ]
    return Runs(found.runs, tuple(copied), found.conversations)


def test_copies_of_one_rollout_are_no_narrower_than_one_rollout() -> None:
    found = planted(40, 3, seed=5)
    alone = pooled_figure(found, seeds={rollout(0): 0})
    tripled = pooled_figure(copies(found, 3))
    assert tripled == pytest.approx(alone, abs=1e-12)
    # The trap it avoids: three rollouts counted as independent conversations would shrink
    # the interval by about the square root of 3.
    assert tripled[2] - tripled[1] > 0.1


def test_rollouts_are_one_model_in_the_report_never_several_in_the_ranks() -> None:
    found = planted(40, 3, seed=1, **{"m/a": 0.5, "m/b": 0.6, "m/c": 0.8})
    summary = build_summary(found, Options(resamples=200, permutations=99))
    [(name, section)] = summary.rollouts.items()
    assert name == SIMULATOR and section.models == [rollout(s) for s in range(3)]
    assert section.figures[TASK].rollouts == 3
    assert len(section.noise_floor[TASK].values) == 3
    rollouts = {rollout(s) for s in range(3)}
    ranked = {m for r in summary.rank_correlation.reliability for m in r.models}
    assert ranked and not ranked & rollouts
    assert all(lead.leader not in rollouts for lead in summary.leads)
    assert not {r.model for r in summary.scores if r.subject} & rollouts
    # The report shows the section, with the pooled headline as summary.json holds it.
    page, board = render_html(summary), render_markdown(summary)
    value = f"{section.figures[TASK].value:.3f}"
    for shown in (page, board):
        assert "Simulator rollouts" in shown and SIMULATOR in shown and value in shown
    assert '<section id="rollouts">' in page and 'href="#rollouts"' in page


def test_a_run_with_no_simulator_has_no_rollouts_section() -> None:
    found = seeded(runs(Plan({"m/a": {TASK: 0.6}, "m/b?seed=3": {TASK: 0.7}}, conversations=12)))
    assert rollout_seeds(found) == {}  # one model named with a seed is no simulator
    summary = build_summary(found, Options(resamples=100, permutations=99))
    assert summary.rollouts == {}
    assert "rollouts" in summary.model_dump()
    assert "Simulator rollouts" not in render_html(summary) + render_markdown(summary)
