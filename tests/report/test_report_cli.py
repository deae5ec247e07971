"""`attunebench report` and `attunebench power` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attunebench.cli import app

runner = CliRunner()


def test_report_writes_summary_and_page(run_dir: Path, tmp_path: Path) -> None:
    arguments = [
        "report",
        str(run_dir),
        "--out",
        str(tmp_path),
        "--seed",
        "1",
        "--resamples",
        "200",
    ]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["settings"]["seed"] == 1 and summary["settings"]["resamples"] == 200
    assert (tmp_path / "report.html").read_text().startswith("<!doctype html>")
    assert "wrote" in result.output


def test_report_options_reach_the_settings(run_dir: Path, tmp_path: Path) -> None:
    arguments = ["report", str(run_dir), "--out", str(tmp_path), "--format", "json"]
    result = runner.invoke(app, [*arguments, "--resamples", "100", "--include-simulated"])
    assert result.exit_code == 0, result.output
    settings = json.loads((tmp_path / "summary.json").read_text())["settings"]
    assert settings["include_simulated"] and not settings["all_items"]
    result = runner.invoke(app, [*arguments, "--resamples", "100", "--all-items"])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["settings"]["all_items"] and summary["left_out_items"] == []
    assert any(w["kind"] == "uneven_items" for w in summary["warnings"])


def test_report_as_markdown(run_dir: Path, tmp_path: Path) -> None:
    arguments = ["report", str(run_dir), "--out", str(tmp_path), "--format", "markdown"]
    result = runner.invoke(app, [*arguments, "--resamples", "100"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "leaderboard.md").read_text().startswith("# AttuneBench leaderboard")


def test_report_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "not a run directory" in result.output


def test_report_refuses_an_unknown_format(run_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(run_dir), "--out", str(tmp_path), "--format", "pdf"])
    assert result.exit_code == 2


def test_power_prints_a_table_per_task(run_dir: Path) -> None:
    arguments = ["power", str(run_dir), "--models", "m/model0", "m/model2"]
    arguments += ["--tasks", "emotion,response", "--simulations", "100"]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 0, result.output
    assert "emotion" in result.output and "response" in result.output
    assert "behavior:" not in result.output
    assert "macro_f1" in result.output and "range" in result.output  # the headline named
    assert "conversations reach power 80%" in result.output or "needed for power" in result.output


def test_power_names_an_unknown_model(run_dir: Path) -> None:
    result = runner.invoke(app, ["power", str(run_dir), "--models", "m/model0", "m/nobody"])
    assert result.exit_code == 2
    assert "m/nobody" in result.output


def test_the_cli_defaults_are_the_analysis_defaults() -> None:
    from attunebench.analysis.bootstrap import DEFAULT_RESAMPLES
    from attunebench.analysis.comparisons.power import DEFAULT_SIMULATIONS
    from attunebench.cli import report

    assert (report.RESAMPLES, report.SIMULATIONS) == (DEFAULT_RESAMPLES, DEFAULT_SIMULATIONS)


def test_report_compare_shows_each_pairs_paired_difference(run_dir: Path, tmp_path: Path) -> None:
    arguments = ["report", str(run_dir), "--out", str(tmp_path), "--resamples", "200"]
    compare = ["--compare", "m/model2,m/model0", "--compare", "m/model1,m/model0"]
    result = runner.invoke(app, [*arguments, *compare])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    found = {(d["task"], d["a"], d["b"]): d for d in summary["differences"]}
    assert len(found) == 2 * len(summary["tasks"])
    rows = {(r["task"], r["model"]): r for r in summary["scores"] if r["headline"]}
    for (task, a, b), d in found.items():  # the leaderboard's headlines, subtracted
        assert d["metric"] == rows[task, a]["metric"]
        assert d["a_value"] == pytest.approx(rows[task, a]["value"], abs=1e-12)
        gap = rows[task, a]["value"] - rows[task, b]["value"]
        assert d["value"] == pytest.approx(gap, abs=1e-12)
        assert d["ci_low"] < d["value"] < d["ci_high"] and d["n_clusters"] == 24
    page = (tmp_path / "report.html").read_text()
    section = page[page.index('<section id="differences">') :]
    section = section[: section.index("</section>")]
    assert " open>" in section.split("\n")[0]  # asked for: unfolded
    assert "m/model2 − m/model0" in section and "macro_f1" in section
    assert "gold given by" in section and "seed 0; 200 paired resamples" in section
    assert "Model differences, same items" in result.output
    assert "m/model1 − m/model0" in result.output and "data sha256" in result.output
    result = runner.invoke(app, [*arguments, *compare, "--format", "markdown"])
    board = (tmp_path / "leaderboard.md").read_text()
    assert "## Model differences" in board and "| m/model2 − m/model0 |" in board


def test_report_compare_names_a_model_it_does_not_know(run_dir: Path, tmp_path: Path) -> None:
    arguments = ["report", str(run_dir), "--out", str(tmp_path), "--compare", "m/modle2,m/model0"]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 2
    (line,) = [line for line in result.output.splitlines() if line.strip()]
    assert "'m/modle2'" in line and "did you mean 'm/model2'?" in line
    assert "models under test present: " in line and "m/model1" in line
    assert "baseline/random" not in line  # a yardstick is never compared
    assert not (tmp_path / "summary.json").exists()


def test_report_compare_takes_two_different_models(run_dir: Path, tmp_path: Path) -> None:
    for asked in ("m/model2", "m/model2,m/model2", "m/model0,m/model1,m/model2"):
        arguments = ["report", str(run_dir), "--out", str(tmp_path), "--compare", asked]
        result = runner.invoke(app, arguments)
        assert result.exit_code == 2, asked
        assert "give two different models as A,B" in result.output
