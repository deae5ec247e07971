"""Three `sim/judge` judges of planted biases through `attunebench run` and `report`: one
neutral (but noisy), one that names the reply shown first in 30% of comparisons, one that
favours a model of its own family by 0.3. summary.json must give alpha, recover the position
and self-preference biases within their intervals, and correct the judges' win rates to
intervals covering the true ones, where the judges' own do not for the favoured model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from panel_harness import (
    FAVOUR_BY,
    JUDGES,
    NEUTRAL_ACCURACY,
    POSITION,
    true_win_rate,
    write_data,
    write_models,
)
from typer.testing import CliRunner

from attunebench.cli import app

runner = CliRunner()


def invoke(*arguments: str) -> None:
    result = runner.invoke(app, list(arguments))
    assert result.exit_code == 0, result.output


def covers(found: dict[str, Any], value: float) -> bool:
    return found["ci_low"] is not None and found["ci_low"] <= value <= found["ci_high"]


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("panel")
    write_data(root / "data.jsonl", 80)
    write_models(root / "models.toml")
    arguments = ["run", "--data", str(root / "data.jsonl"), "--models-file"]
    arguments += [str(root / "models.toml"), "--model", "acme-1", "--model", "other-1"]
    arguments += [f"--judge={judge}" for judge in JUDGES]
    arguments += ["--task", "response", "--task", "judge_audit", "--no-cache", "--no-progress"]
    invoke(*arguments, "--out", str(root / "run"))
    report = root / "report"
    invoke("report", str(root / "run"), "--out", str(report), "--include-simulated")
    found: dict[str, Any] = json.loads((report / "summary.json").read_text())
    found["ledger"] = json.loads((root / "run" / "ledger.json").read_text())
    found["records"] = [json.loads(line) for line in (root / "run" / "records.jsonl").open()]
    return found


@pytest.mark.slow
def test_every_verdict_is_kept_and_each_judge_is_costed(summary: dict[str, Any]) -> None:
    response = [r for r in summary["records"] if r["task"] == "response"]
    # Per judge: four pairwise verdicts (two comparisons, two orders) and the rubric.
    assert {len(r["verdicts"]) for r in response} == {5 * len(JUDGES)}
    costed = {(e["model"], e["task"]) for e in summary["ledger"]["entries"] if e["role"] == "judge"}
    assert costed == {(j, t) for j in JUDGES for t in ("response", "judge_audit")}


@pytest.mark.slow
def test_alpha_and_each_judge_are_reported(summary: dict[str, Any]) -> None:
    panel = summary["judge_panel"]
    assert panel["judges"] == sorted(JUDGES)
    alpha = panel["alpha"]
    assert 0.3 < alpha["value"] < 0.9 and alpha["ci_low"] < alpha["value"] < alpha["ci_high"]
    consistency = {j["judge"]: j["order_consistency"]["value"] for j in panel["per_judge"]}
    assert consistency["judge-neutral"] == consistency["judge-self"] == 1.0
    assert covers(panel["per_judge"][1]["order_consistency"], 1 - POSITION)


@pytest.mark.slow
def test_position_bias_is_recovered(summary: dict[str, Any]) -> None:
    bias = summary["judge_bias"]
    assert covers(bias["judge-position"]["position"], POSITION)
    assert bias["judge-neutral"]["position"]["value"] == 0.0


@pytest.mark.slow
def test_self_preference_is_recovered_and_not_invented(summary: dict[str, Any]) -> None:
    (found,) = summary["judge_bias"]["judge-self"]["self_preference"]
    assert (found["model"], found["relation"]) == ("acme-1", "family")
    planted = FAVOUR_BY * (1 - found["participant_win_rate"])  # every non-win made a win
    assert covers(found["bias"], planted)
    assert found["statement"] and "acme-1" in found["statement"]
    # The neutral judge shares a family with other-1 and favours nothing; its noise (a uniform
    # guess in 15% of comparisons) only pulls the win rate towards 0.5.
    (neutral,) = summary["judge_bias"]["judge-neutral"]["self_preference"]
    noise = (1 - NEUTRAL_ACCURACY) * (0.5 - neutral["participant_win_rate"])
    assert neutral["model"] == "other-1" and covers(neutral["bias"], noise)
    assert not covers(neutral["bias"], planted)
    assert summary["judge_bias"]["judge-position"]["self_preference"] == []


@pytest.mark.slow
def test_corrected_win_rates_cover_the_truth(summary: dict[str, Any]) -> None:
    corrected = summary["response_corrected"]
    assert set(corrected) == {"acme-1", "other-1"}
    for model, row in corrected.items():
        assert covers(row["corrected"], true_win_rate(model)), (model, row)
        assert row["n_audited"] == 80
    favoured = corrected["acme-1"]
    assert not covers(favoured["judge"], true_win_rate("acme-1"))  # the panel alone is fooled
    assert favoured["stands_in"] == "no"
    alone = favoured["by_judge"]["judge-self"]  # the favouring judge alone, then corrected
    assert not covers(alone["judge"], true_win_rate("acme-1"))
    assert covers(alone["corrected"], true_win_rate("acme-1"))
    warned = {(w["kind"], w["model"]) for w in summary["warnings"]}
    assert {("judge_self_preference", "acme-1"), ("judges_off_participants", "acme-1")} <= warned
