"""The person's own ceiling (`analysis.references.ceiling`) against planted truth: people who answer
a question asked again differently with a known probability, 2,000 probes per task, and models
drawn with the people's own noise, at chance, and with none.

Traps: without probes there is no ceiling (never 1.0); the ceiling is read from the evaluated
conversations, never from a model's records; a ceiling at chance, or whose interval reaches
chance, gives no share; a share above 1 is never read "of the way from chance".

The study is drawn and analysed once for the module: 400 conversations of 5 turns (2,000
probes per task, as the planted claim asks), about 5 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attunebench.analysis.loading import Runs
from attunebench.analysis.references.ceiling import ABOVE, Ceiling, share
from attunebench.analysis.schema import SelfConsistency, Summary
from attunebench.analysis.summary import Options, build_summary
from attunebench.report.glance import glance
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Task
from planted import retest_study

NOISE = 0.2
MODELS = {"model/like-people": NOISE, "model/at-chance": None, "model/first-answer": 0.0}
OPTIONS = Options(resamples=500, permutations=200, subgroup_permutations=200)


def _tasks() -> list[Task[Any, Any]]:
    registry = load_tasks()
    return [registry.get(name)() for name in ("emotion", "preference")]


def _planted(task: str, noise: float) -> float:
    if task == "emotion":  # the primary label's macro-F1
        return retest_study.macro_f1(retest_study.SHARES, noise)
    return retest_study.agreement(noise)  # preference: the pick, right in both orders


@pytest.fixture(scope="module")
def study() -> Summary:
    plan = retest_study.Plan(conversations=400, turns=5, noise=NOISE, seed=3)
    return build_summary(retest_study.runs(plan, _tasks(), MODELS), OPTIONS)


@pytest.mark.parametrize("task", ["emotion", "preference"])
def test_the_planted_ceiling_is_recovered_from_2000_probes(study: Summary, task: str) -> None:
    found = study.self_consistency[task]
    assert found.n == 2000 and found.n_conversations == 400
    assert found.value is not None and found.ci_low is not None and found.ci_high is not None
    assert abs(found.value - _planted(task, NOISE)) <= 0.05
    assert found.ci_low <= _planted(task, NOISE) <= found.ci_high


@pytest.mark.parametrize("task", ["emotion", "preference"])
def test_a_model_with_the_peoples_own_noise_reaches_a_share_of_one(
    study: Summary, task: str
) -> None:
    found = study.share_of_ceiling[task]["model/like-people"]
    assert found.ci_low is not None and found.ci_high is not None
    assert found.ci_low <= 1.0 <= found.ci_high


@pytest.mark.parametrize("task", ["emotion", "preference"])
def test_a_model_at_chance_gets_a_share_of_zero(study: Summary, task: str) -> None:
    found = study.share_of_ceiling[task]["model/at-chance"]
    assert found.value is not None and found.ci_low is not None and found.ci_high is not None
    assert found.ci_low <= 0.0 <= found.ci_high and abs(found.value) < 0.1


@pytest.mark.parametrize("task", ["emotion", "preference"])
def test_only_a_model_closer_to_the_first_answers_than_the_repeats_passes_one(
    study: Summary, task: str
) -> None:
    found = study.share_of_ceiling[task]["model/first-answer"]
    assert found.ci_low is not None and found.ci_low > 1.0


@pytest.mark.parametrize("task", ["emotion", "preference"])
def test_a_share_above_one_says_it_is_above_the_peoples_own_consistency(
    study: Summary, task: str
) -> None:
    found = study.share_of_ceiling[task]["model/first-answer"]
    assert found.value is not None and found.ci_low is not None and found.ci_high is not None
    assert found.value > 1.0 and found.reason == ABOVE
    (line,) = [line for line in glance(study).ceilings if line.topic == task]
    assert line.text.endswith(
        f"model/first-answer {found.value:.2f} [{found.ci_low:.2f}, {found.ci_high:.2f}]: "
        "above the people's own consistency"
    )
    assert "of the way from chance" not in line.text  # the trap: "2.4 of the way"
    below = study.share_of_ceiling[task]["model/at-chance"]
    assert below.value is not None and below.value < 1.0 and below.reason is None


def test_a_ceiling_whose_interval_reaches_chance_gives_no_share() -> None:
    # planted: people who change their emotion label three times in four, 30 conversations:
    # their agreement is above chance, but its interval reaches it, so the way from chance to
    # it may be none and a share of it (here about 38) says nothing
    plan = retest_study.Plan(conversations=30, turns=3, noise=0.75, seed=0)
    models = {"model/first-answer": 0.0, "model/like-people": 0.75}
    summary = build_summary(retest_study.runs(plan, _tasks(), models), OPTIONS)
    ceiling = summary.self_consistency["emotion"]
    assert ceiling.value is not None and ceiling.chance is not None and ceiling.ci_low is not None
    assert ceiling.value > ceiling.chance >= ceiling.ci_low  # the planted case
    for found in summary.share_of_ceiling["emotion"].values():
        assert found.value is None and found.ci_low is None
        assert "reaches chance" in (found.reason or "")
    (line,) = [line for line in glance(summary).ceilings if line.topic == "emotion"]
    assert "reaches chance" in line.text and "of the way from chance" not in line.text
    # the known answer beside it: with people consistent enough the share is given
    plan = retest_study.Plan(conversations=30, turns=3, noise=0.2, seed=0)
    clear = build_summary(retest_study.runs(plan, _tasks(), models), OPTIONS)
    assert clear.share_of_ceiling["emotion"]["model/first-answer"].ci_low is not None


def test_the_chance_levels_are_the_tasks_own(study: Summary) -> None:
    emotion, preference = (study.self_consistency[t].chance for t in ("emotion", "preference"))
    assert emotion == pytest.approx(1 / len(retest_study.LABELS))
    assert preference is not None and 0.4 < preference < 0.5  # half of the untied pairs


def _small(seed: int = 0) -> Runs:
    plan = retest_study.Plan(conversations=30, turns=3, seed=seed)
    return retest_study.runs(plan, _tasks(), {"model/like-people": NOISE})


def _without_probes(runs: Runs) -> Runs:
    kept = {cid: c.model_copy(update={"probes": ()}) for cid, c in runs.conversations.items()}
    return Runs(runs.runs, runs.records, kept, runs.notices)


def test_without_probes_the_ceiling_is_not_measured() -> None:
    summary = build_summary(_without_probes(_small()), OPTIONS)
    assert summary.self_consistency == {} and summary.share_of_ceiling == {}


def test_the_ceiling_is_read_from_the_conversations_not_the_records() -> None:
    runs = _small()
    people = build_summary(runs, OPTIONS).self_consistency
    # Another model's records (answering the first answers exactly) leave it as it was.
    more = retest_study.runs(
        retest_study.Plan(conversations=30, turns=3),
        _tasks(),
        {"model/like-people": NOISE, "model/first-answer": 0.0},
    )
    assert build_summary(more, OPTIONS).self_consistency == people
    # Repeats that give every first answer again are a ceiling of 1, whatever the records.
    steady = {}
    for cid, conversation in runs.conversations.items():
        probes = []
        for probe in conversation.probes:
            turn = conversation.turns[probe.turn]
            again = {"state": turn.state} if probe.state else {"preference": turn.preference}
            probes.append(probe.model_copy(update={"state": None, "preference": None, **again}))
        steady[cid] = conversation.model_copy(update={"probes": tuple(probes)})
    found = build_summary(Runs(runs.runs, runs.records, steady), OPTIONS).self_consistency
    assert {task: entry.value for task, entry in found.items()} == {
        "emotion": 1.0,
        "preference": 1.0,
    }


def _ceiling(value: float, samples: list[float], chance: float = 0.5) -> Ceiling:
    entry = SelfConsistency(metric="score", value=value, chance=chance, n=100, n_conversations=20)
    return Ceiling(entry, np.array(samples), 20)


def test_a_share_needs_a_ceiling_above_chance() -> None:
    at_chance = share(0.7, np.full(4, 0.7), _ceiling(0.5, [0.5] * 4), 0.5, 0.95)
    assert at_chance.value is None and "not above chance" in (at_chance.reason or "")
    reaching = share(0.7, np.full(4, 0.7), _ceiling(0.6, [0.6, 0.7, 0.5, 0.49]), 0.5, 0.95)
    assert reaching.value is None  # a share of 2.0, unbounded in the resamples: none given
    assert "the ceiling's interval reaches chance" in (reaching.reason or "")
    bounded = share(0.6, np.array([0.55, 0.6, 0.65, 0.6]), _ceiling(0.7, [0.7] * 4), 0.5, 0.5)
    assert bounded.value == pytest.approx(0.5)
    assert bounded.ci_low is not None and bounded.ci_high is not None
    assert bounded.ci_low < 0.5 < bounded.ci_high


def test_the_validity_benchmark_reports_each_planted_ceiling_recovered() -> None:
    """`benchmarks/validity.py --keys self_consistency_recovery`: three noise levels, 2,000
    probes per task each (about 5 s)."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "validity.py"
    run = [sys.executable, str(script), "--keys", "self_consistency_recovery"]
    done = subprocess.run(run, capture_output=True, text=True, check=True, timeout=300)
    found = json.loads(done.stdout.splitlines()[-1])["self_consistency_recovery"]
    assert sorted(found) == ["0.1", "0.2", "0.3"]
    for noise, entry in found.items():
        assert entry["planted"]["preference"] == pytest.approx(1 - float(noise))
        for task, planted in entry["planted"].items():
            assert abs(entry["measured"][task] - planted) <= 0.05, (noise, task)
