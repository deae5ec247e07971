"""The whole study workflow offline, in one test: the app with a mock pool, `collect simulate`
over HTTP, `collect export`, `data validate`, `attunebench run` (baselines and the proxy judge,
as `attunebench demo` runs them) and `attunebench report`."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from collect_harness import Serve, study_data
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.collect.study import parse_study

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

# Replies that differ in what they do, so picks, behaviors and ties all occur.
OUTPUTS = {
    "mock/asker": ["What happened next?", "How did that feel?", "Who else knows about it?"],
    "mock/fixer": ["You could try writing a list.", "Maybe talk to a friend about it."],
    "mock/validator": ["That makes sense; anyone would feel that.", "That sounds hard."],
}
TASKS = ("emotion", "behavior", "preference", "response", "judge_audit")


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"{args[:2]}: {result.output}"
    return result.output


def test_simulated_study_to_report(serve: Serve, tmp_path: Path) -> None:
    study = parse_study(
        study_data(
            models=[{"spec": spec, "options": {"outputs": out}} for spec, out in OUTPUTS.items()],
            questions={"behaviors": "optional", "need_behaviors": "optional"},
            turns={"min": 2, "max": 4},
            enrolment={"open": True, "cap": 50, "simulated": True},
            traits=[],
        )
    )
    base, db = serve(study)
    join = re.search(
        r"open link: (\S+)", _invoke("collect", "status", "--db", db, "--base-url", base)
    )
    assert join, "status prints the open link"
    said = _invoke(
        "collect", "simulate", "--url", join.group(1), "--participants", "8", "--seed", "3"
    )
    assert "8 simulated participants enrolled, 8 finished" in said

    data = tmp_path / "simulated.jsonl"
    _invoke("collect", "export", "--db", db, "--out", str(data))
    _invoke("data", "validate", str(data))
    records = [json.loads(line) for line in data.read_text().splitlines()]
    assert len(records) == 8
    assert all(r["source"]["kind"] == "simulated" for r in records)
    assert {v for r in records for v in r["source"]["provenance"].values()} == {"simulated"}
    turns = [t for r in records for t in r["turns"]]
    assert all("need" in t for t in turns) and all(t["continued_by"] for t in turns)
    picks = Counter(t["preference"].get("chosen", "tie")[-1:] or "tie" for t in turns)
    assert len(picks) >= 2, picks  # not one answer for everything

    run = tmp_path / "run"
    _invoke(
        "run",
        "--data",
        str(data),
        "--model",
        "baseline/random",
        "--model",
        "baseline/lexicon",
        "--judge",
        "proxy/minilm",
        "--out",
        str(run),
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--no-progress",
    )
    tasks = Counter(json.loads(line)["task"] for line in (run / "records.jsonl").open())
    for task in TASKS:
        assert tasks[task] > 0, (task, tasks)

    report = tmp_path / "report"
    _invoke("report", str(run), "--out", str(report), "--resamples", "200")
    summary: dict[str, Any] = json.loads((report / "summary.json").read_text())
    banner = summary["provenance"]["banner"]
    assert any(line.startswith("simulated data") for line in banner), banner
    page = (report / "report.html").read_text()
    assert banner[0] in page
