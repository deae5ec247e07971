"""The replay is an ordinary run directory: `attunebench report` reads it as it reads any run,
and finds the validation's own figures there: each rollout's headline (the noise floor's
values), the task's crowd reference, at 0 on a position-adjusted headline (an answer that
ignores the item; read across folds it scored -0.707 and -0.569 on open-v1), and the people's
own ceiling with the simulated person's share of it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from attunebench.models.modelsfile import ModelEntry
from attunebench.simulators.replay import REPLAY_RUN
from attunebench.simulators.session import person_name

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from cli_harness import attunebench
from people import written
from validating import Validate

from planted import retest_study

ADJUSTED = {"position_adjusted_r", "mean_adjusted_r"}  # headlines the crowd scores 0 on
TOLERANCE = 1e-9  # within folds the crowd's adjusted r is 0 up to rounding (test_crowd.py)


@pytest.fixture(scope="module")
def reported(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Path]:
    """A noisy person's validation (its rollouts differ), and the report of its replay."""
    out = tmp_path_factory.mktemp("noisy")
    args = ["simulators", "validate", "--simulator", "sim/person-oracle?noise=0.4"]
    ran = attunebench(*args, "--data", corpus, "--out", out, "--no-cache", "--resamples", 200)
    assert ran.exit_code == 0, ran.output
    shown = attunebench("report", out / REPLAY_RUN, "--out", out / "report")
    assert shown.exit_code == 0, shown.output
    validated = json.loads((out / "simulators.json").read_text())
    summary = json.loads((out / "report" / "summary.json").read_text())
    return validated, summary, out


def _headlines(summary: Any) -> dict[tuple[str, str], float | None]:
    return {(r["model"], r["task"]): r["value"] for r in summary["scores"] if r["headline"]}


def test_report_reads_each_rollout_as_a_model(reported: tuple[Any, Any, Path]) -> None:
    validated, summary, _ = reported
    headlines = _headlines(summary)
    seeds = validated["simulator"]["seeds"]
    assert len(seeds) == 3 and validated["replay"]
    for task, figure in validated["replay"].items():
        by_rollout = validated["noise_floor"][f"replay.{task}"]["values"]
        assert len(set(by_rollout)) > 1, task  # noise redrawn per rollout: a real spread
        simulator = ModelEntry.from_spec(validated["simulator"]["spec"])
        for seed, value in zip(seeds, by_rollout, strict=True):
            assert headlines[(person_name(simulator, seed), task)] == pytest.approx(value), task
        assert figure["rollouts"] == len(seeds)


def test_report_scores_the_crowd_as_the_validation_does(reported: tuple[Any, Any, Path]) -> None:
    validated, summary, _ = reported
    headlines = _headlines(summary)
    adjusted = 0
    for task, figure in validated["replay"].items():
        crowd = figure["crowd"]
        if crowd is None:
            continue
        assert crowd["fit"] == "cross-fitted"
        scored = headlines[(crowd["reference"], task)]
        assert scored == pytest.approx(crowd["value"], abs=TOLERANCE), task
        if figure["metric"] in ADJUSTED:
            adjusted += 1
            assert scored is not None and abs(scored) < TOLERANCE, task
    assert adjusted == 2  # outcome and rating


def test_report_pools_the_rollouts_as_the_validation_does(
    reported: tuple[Any, Any, Path],
) -> None:
    """The report's `rollouts` are the validation's replay figures, by the same computation on
    the report's own resamples: every point value and spread the same, intervals beside."""
    validated, summary, _ = reported
    [(name, pooled)] = summary["rollouts"].items()
    assert name == "person/sim/person-oracle?noise=0.4" and len(pooled["models"]) == 3
    assert set(pooled["figures"]) == set(validated["replay"])
    for task, figure in validated["replay"].items():
        shown = pooled["figures"][task]
        for key in ("value", "n_items", "n_conversations", "n_invalid", "rollouts", "chance"):
            assert shown[key] == pytest.approx(figure[key]), (task, key)
        for key in ("crowd", "minus_crowd", "share_of_ceiling"):
            mine, theirs = shown[key], figure[key]
            assert (mine is None) == (theirs is None), (task, key)
            if mine is not None:
                assert mine["value"] == pytest.approx(theirs["value"]), (task, key)
        assert shown["ci_low"] is not None and shown["ci_low"] <= shown["value"] <= shown["ci_high"]
        assert pooled["noise_floor"][task] == validated["noise_floor"][f"replay.{task}"], task
    # The rollouts are one simulator, not three models under test.
    assert not any(r["subject"] for r in summary["scores"] if r["model"] in pooled["models"])


def test_the_replay_run_holds_what_a_run_holds(reported: tuple[Any, Any, Path]) -> None:
    validated, _, out = reported
    info = json.loads((out / REPLAY_RUN / "run.json").read_text())
    assert info["complete"] and set(info["tasks"]) == set(validated["replay"])
    assert {m["spec"] for m in info["models"]} == {"person/sim/person-oracle?noise=0.4"}
    assert [m["params"]["seed"] for m in info["models"]] == validated["simulator"]["seeds"]
    assert {m["kind"] for m in info["models"]} == {"simulated"}  # the kind of the model in the role


def test_report_finds_the_peoples_ceiling_and_the_share_of_it(
    validated: Validate, tmp_path: Path
) -> None:
    """People who answer a question asked again differently with chance 0.2 (as in
    test_planted.py): one rollout, so the report's share for its one model is the figure's."""
    study = retest_study.Plan(conversations=30, turns=4, noise=0.2, seed=1)
    given = {"state": "first-person", "preference": "first-person"}
    people = [
        c.model_copy(update={"source": c.source.model_copy(update={"provenance": given})})
        for c in retest_study.people(study)
    ]
    data = written(tmp_path / "study.jsonl", people)
    replayed = validated(data, "sim/person-oracle", per_conversation=10, seeds=1).replay
    shown = attunebench("report", tmp_path / "validated" / REPLAY_RUN, "--out", tmp_path / "r")
    assert shown.exit_code == 0, shown.output
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    model = person_name(ModelEntry.from_spec("sim/person-oracle"), 0)
    for task in ("emotion", "preference"):
        figure = replayed[task]
        assert figure.ceiling is not None and figure.share_of_ceiling is not None
        assert summary["self_consistency"][task]["value"] == pytest.approx(figure.ceiling.value)
        share = summary["share_of_ceiling"][task][model]
        assert share["value"] == pytest.approx(figure.share_of_ceiling.value)
        assert share["value"] > 1  # the oracle is the first answers: above the repeats
