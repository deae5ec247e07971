"""`attunebench demo` end to end on a small slice: data, run, report, all offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attunebench.cli import app


@pytest.mark.slow
def test_demo_writes_the_run_and_the_report(tmp_path: Path) -> None:
    arguments = ["demo", "--out", str(tmp_path), "--esconv", "2", "--train-esconv", "4"]
    result = CliRunner().invoke(app, [*arguments, "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert f"report: {tmp_path / 'report.html'}" in result.output
    assert (tmp_path / "run" / "records.jsonl").stat().st_size > 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert {m["name"] for m in summary["provenance"]["models"]} == {
        "baseline/random",
        "baseline/majority",
        "baseline/lexicon",
        "baseline/knn",
    }
    assert [j["kind"] for j in summary["provenance"]["judges"]] == ["proxy"]
    tasks = {t["name"] for t in summary["tasks"]}  # every task the sample gives items for
    assert {"emotion", "behavior", "preference", "response", "outcome"} <= tasks
    assert summary["judge_agreement"] and summary["context_modes"]
    assert any("illustrative" in line for line in summary["provenance"]["banner"])
    assert summary["rank_correlation"]["models"] == []  # baselines are never ranked
    page = (tmp_path / "report.html").read_text()
    assert '<section id="leaderboard">' in page and "<script" not in page
