"""Simulators with known properties, validated through the real pipeline, recover them:
`sim/person-oracle` is the people (replay equal to the gold, ranking fidelity 1, no realism
gap), a calm one reports a larger fall of intensity, a position-biased one replays preference
at chance, and a noisy one widens the noise floor as planted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from people import seekers, written
from validating import Validate

from attunebench.analysis.comparisons.rollouts import rollout_noise
from attunebench.analysis.schema import NoiseFloor
from attunebench.data.validate import load_validated
from attunebench.engine import RECORDS_FILE, RunConfig, read_records, run
from attunebench.models.modelsfile import ModelEntry
from attunebench.simulators import Plan, Sampling
from attunebench.simulators.replay import read_replay, replay_items, replay_tasks, rollout_of
from attunebench.simulators.session import open_session
from planted import retest_study

ORACLE = "sim/person-oracle"


def test_the_person_oracle_is_the_people(
    validated: Validate, corpus: Path, oracle_runs: Path
) -> None:
    report = validated(corpus, ORACLE, runs=(oracle_runs,), include=frozenset({"simulated"}))
    assert report.replay, "every task with first-person gold is replayed"
    for task, figure in report.replay.items():
        assert figure.value == pytest.approx(1.0), task
        assert figure.n_invalid == figure.n_failed == 0
        assert figure.share_of_ceiling is None and figure.ceiling_reason
    assert report.ranking.spearman.value == pytest.approx(1.0)
    assert all(t.spearman.value == pytest.approx(1.0) for t in report.ranking.by_task.values())
    assert report.ranking.flips == []
    # The same runs with their simulated models not counted as models under test: none to rank.
    unranked = validated(corpus, ORACLE, runs=(oracle_runs,), seeds=1).ranking
    assert unranked.spearman.value is None and "no model under test" in str(
        unranked.spearman.reason
    )
    realism = report.realism
    assert realism.auroc.value == pytest.approx(0.5)  # its messages are the people's own
    assert realism.intensity_change.value == pytest.approx(0.0)
    assert realism.emotion_by_third.value == pytest.approx(0.0)
    assert all(
        third.distance.value == pytest.approx(0.0) for third in realism.emotion_by_third.thirds
    )
    assert realism.negative_feedback_share.value == pytest.approx(0.0)
    assert report.leaks.instructions == 0
    assert all(floor.spread in (0.0, None) for floor in report.noise_floor.values())


def test_a_calm_simulator_reports_a_larger_fall(validated: Validate, tmp_path: Path) -> None:
    data = written(tmp_path / "seekers.jsonl", seekers(20, seed=3))
    report = validated(data, f"{ORACLE}?calm=0.5")
    change = report.realism.intensity_change
    people = load_validated(data)
    afters = [
        c.outcome.final_state.intensity for c in people if c.outcome and c.outcome.final_state
    ]
    # Each reported intensity moves half of the way to 1: the mean change falls by half of
    # the mean distance from 1.
    assert change.value == pytest.approx(-0.5 * float(np.mean(np.array(afters) - 1.0)))
    assert change.ci_high is not None and change.ci_high < 0
    assert change.within_noise is False


def test_a_position_biased_simulator_replays_preference_at_chance(
    validated: Validate, tmp_path: Path
) -> None:
    data = written(tmp_path / "seekers.jsonl", seekers(12, seed=4))
    biased = validated(data, f"{ORACLE}?position=1").replay
    picks = [figure for figure in biased.values() if figure.crowd is not None]
    assert picks
    # Reply A in both orders: right in exactly one of them, on every pair.
    chance = [f for f in picks if f.metric == "score"]
    assert [f.value for f in chance] == [pytest.approx(0.5)]


async def _pair_floor(data: Path, noise: float, seeds: int, out: Path) -> tuple[NoiseFloor, int]:
    """The noise floor of the pairs' headline over `seeds` rollouts of a noisy person, and the
    number of pairs (only the package's task whose headline is the mean per-item score is
    replayed; the toy task the tests register has that headline too)."""
    conversations = load_validated(data)
    tasks = [
        t
        for t in replay_tasks()
        if t.scoring.headline_metric == "score"
        and type(t).__module__.startswith("attunebench.")
        and replay_items(t, conversations)
    ]
    simulator = ModelEntry.from_spec(f"{ORACLE}?noise={noise}")
    plan = Plan(
        simulator=simulator, data=(data,), out=out, sampling=Sampling(seeds=tuple(range(seeds)))
    )
    async with open_session(plan) as session:
        await session.replay(tasks, data, out, None)
    [found] = read_replay(out, tasks, conversations, None)
    by_model = {r.model: rollout_of(r) for r in found.records}
    return rollout_noise(found.task, found.records, by_model), len(found.items)


def test_a_noisy_simulator_widens_the_noise_floor(tmp_path: Path) -> None:
    data = written(tmp_path / "seekers.jsonl", seekers(24, seed=5))
    floors = {
        noise: asyncio.run(_pair_floor(data, noise, seeds=12, out=tmp_path / f"noise-{noise}"))
        for noise in (0.0, 0.1, 0.5)
    }
    assert floors[0.0][0].spread == 0.0
    low, high = floors[0.1][0].sd, floors[0.5][0].sd
    assert low is not None and high is not None and 0 < low < high
    # A noisy pair scores 0.5 (one random letter in both orders) instead of 1: the headline
    # of n pairs has a standard deviation of 0.5 sqrt(p (1 - p) / n) over rollouts.
    for noise in (0.1, 0.5):
        floor, n = floors[noise]
        planted = 0.5 * np.sqrt(noise * (1 - noise) / n)
        assert floor.sd == pytest.approx(planted, rel=0.6)
        assert np.mean(floor.values) == pytest.approx(1 - noise / 2, abs=3 * planted)


def test_the_share_of_the_peoples_own_ceiling(validated: Validate, tmp_path: Path) -> None:
    """People who answer a question asked again differently with chance 0.2: the person
    oracle (their first answers) passes their ceiling; a simulator at chance gets a share of 0."""
    study = retest_study.Plan(conversations=60, turns=4, noise=0.2, seed=1)
    given = {"state": "first-person", "preference": "first-person"}
    people = [
        c.model_copy(update={"source": c.source.model_copy(update={"provenance": given})})
        for c in retest_study.people(study)
    ]
    data = written(tmp_path / "study.jsonl", people)
    planted = {
        "emotion": retest_study.macro_f1(retest_study.SHARES, 0.2),
        "preference": retest_study.agreement(0.2),
    }
    replayed = validated(data, ORACLE, per_conversation=10, seeds=1).replay
    for task, truth in planted.items():
        figure = replayed[task]
        assert figure.ceiling is not None and figure.chance is not None
        assert figure.ceiling.ci_low <= truth <= figure.ceiling.ci_high
        share = figure.share_of_ceiling
        assert share is not None and share.value is not None and share.ci_low is not None
        expected = (figure.value - figure.chance) / (figure.ceiling.value - figure.chance)
        assert share.value == pytest.approx(expected)
        assert share.ci_low > 1.0  # closer to the first answers than the people's own repeats
    at_chance = validated(data, f"{ORACLE}?noise=1", per_conversation=10, seeds=1).replay
    share = at_chance["preference"].share_of_ceiling
    assert share is not None and share.ci_low is not None and share.ci_high is not None
    assert share.ci_low <= 0.0 <= share.ci_high


def test_the_replay_asks_the_items_of_the_runs_it_ranks(
    validated: Validate, tmp_path: Path
) -> None:
    """Runs made with other task options and seed than the defaults: the replay makes its
    tasks as they did, so every item of theirs is ranked."""
    data = written(tmp_path / "seekers.jsonl", seekers(8, seed=9))
    task = next(t for t in replay_tasks() if "max_derived_pairs" in t.options)
    options = {task.name: {"max_derived_pairs": 2}}
    models = tuple(
        ModelEntry(name=f"oracle-{n}", spec="sim/oracle", options={"seed": n}) for n in range(3)
    )
    config = RunConfig(
        data=data,
        out=tmp_path / "run",
        models=models,
        task_options=options,
        seed=7,
        cache_path=None,
        progress=False,
    )
    asyncio.run(run(config))
    ranked = validated(
        data,
        ORACLE,
        runs=(tmp_path / "run",),
        include=frozenset({"simulated"}),
        per_conversation=50,
    ).ranking.by_task[task.name]
    records = read_records(tmp_path / "run" / RECORDS_FILE)
    asked = {
        (r.conversation_id, r.turn_index, r.item_id, r.variant)
        for r in records
        if r.task == task.name and r.model == "oracle-0"
    }
    assert ranked.n_items == len(asked) > 0
    made = replay_items(task, load_validated(data))  # with the defaults: other pairs
    assert {(i.conversation.id, i.turn_index, i.item_id, i.variant) for i in made} != asked


def test_baselines_are_ranked_only_when_asked_for(validated: Validate, tmp_path: Path) -> None:
    data = written(tmp_path / "seekers.jsonl", seekers(6, seed=10))
    models = tuple(ModelEntry.from_spec(f"baseline/random?seed={n}") for n in range(3))
    config = RunConfig(
        data=data, out=tmp_path / "run", models=models, cache_path=None, progress=False
    )
    asyncio.run(run(config))
    runs = (tmp_path / "run",)
    assert validated(data, ORACLE, runs=runs, seeds=1).ranking.spearman.value is None
    ranked = validated(data, ORACLE, runs=runs, seeds=1, include=frozenset({"baseline"})).ranking
    assert ranked.spearman.value == pytest.approx(1.0)  # the person oracle is the people
    assert {place.kind for t in ranked.by_task.values() for place in t.models} == {"baseline"}


def test_a_model_of_one_task_leaves_the_other_tasks_ranked(
    validated: Validate, corpus: Path, oracle_runs: Path, tmp_path: Path
) -> None:
    """A lexicon answers some tasks only (emotion, preference): ranked on those beside the
    oracles, left out of the others, which keep their three oracles (once, a model missing
    from a task left it no common item and no ranking)."""
    lexicon = tmp_path / "lexicon"
    config = RunConfig(
        data=corpus,
        out=lexicon,
        models=(ModelEntry.from_spec("baseline/lexicon"),),
        cache_path=None,
        progress=False,
    )
    asyncio.run(run(config))
    answers = {r.task for r in read_records(lexicon / RECORDS_FILE) if r.status != "failed"}
    include = frozenset({"simulated", "baseline"})
    alone = validated(corpus, ORACLE, runs=(oracle_runs,), include=include, seeds=1).ranking
    ranked = validated(corpus, ORACLE, runs=(oracle_runs, lexicon), include=include, seeds=1)
    by_task = ranked.ranking.by_task
    assert set(by_task) == set(alone.by_task) and set(by_task) - answers
    for task, found in by_task.items():
        names = {place.model for place in found.models}
        assert ("baseline/lexicon" in names) == (task in answers), task
        assert len(names) >= 3 and found.spearman.value is not None, task
