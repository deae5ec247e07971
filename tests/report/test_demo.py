"""`attunebench demo` end to end on a small slice: data, run, report, all offline (the run is
`demo_harness.run_demo`'s, made with only the demo's packages importable)."""

from __future__ import annotations

import json

import pytest
from demo_harness import DemoRun


@pytest.mark.slow
def test_demo_writes_the_run_and_the_report(demo: DemoRun) -> None:
    out, done = demo.out, demo.done
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert f"report: {out / 'report.html'}" in done.stdout
    assert (out / "run" / "records.jsonl").stat().st_size > 0
    summary = json.loads((out / "summary.json").read_text())
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
    page = (out / "report.html").read_text()
    assert '<section id="leaderboard">' in page and "<script" not in page
