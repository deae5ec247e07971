"""`attunebench report` and `attunebench power` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

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
    from attunebench.analysis.power import DEFAULT_SIMULATIONS
    from attunebench.cli import report

    assert (report.RESAMPLES, report.SIMULATIONS) == (DEFAULT_RESAMPLES, DEFAULT_SIMULATIONS)
