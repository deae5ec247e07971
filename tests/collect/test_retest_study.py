"""A simulated study with retest probes, from the app to the report: `[retest] share = 0.2`,
`collect simulate --retest-noise 0.2`, `collect export`, `run` with `mock/default` and
`baseline/random`, `report`. summary.json then holds the people's own consistency on emotion and
preference, each with an interval, and every model's share of it where the ceiling's interval
lies above chance.

Which turns get a probe is drawn per participant (whose id is random), so the study is large
enough that each kind of probe falls in at least 10 conversations (the least an interval rests
on) all but about once in 10,000 runs: 50 participants of 6 turns, each turn probed with
probability 0.2, half of them on the emotion check.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from collect_harness import Serve, study_data
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.collect.study import parse_study

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
OUTPUTS = {
    "mock/asker": ["What happened next?", "How did that feel?", "Who else knows about it?"],
    "mock/fixer": ["You could try writing a list.", "Maybe talk to a friend about it."],
    "mock/validator": ["That makes sense; anyone would feel that.", "That sounds hard."],
}
MODELS = ("mock/default", "baseline/random")


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"{args[:2]}: {result.output}"
    return result.output


def test_a_simulated_study_with_retest_probes_measures_the_ceiling(
    serve: Serve, tmp_path: Path
) -> None:
    study = parse_study(
        study_data(
            models=[{"spec": spec, "options": {"outputs": out}} for spec, out in OUTPUTS.items()],
            questions={},
            turns={"min": 6, "max": 6},
            enrolment={"open": True, "cap": 100, "simulated": True},
            traits=[],
            retest={"share": 0.2},
        )
    )
    base, db = serve(study)
    status = _invoke("collect", "status", "--db", db, "--base-url", base)
    join = re.search(r"open link: (\S+)", status)
    assert join, "status prints the open link"
    simulate = ("collect", "simulate", "--url", join.group(1), "--participants", "50")
    said = _invoke(*simulate, "--seed", "4", "--retest-noise", "0.2", "--concurrency", "8")
    assert "50 simulated participants enrolled, 50 finished" in said
    probes = re.search(
        r"retest probes (\d+) \((\d+) emotion, (\d+) pick\)",
        _invoke("collect", "status", "--db", db),
    )
    assert probes and int(probes.group(2)) > 0 and int(probes.group(3)) > 0

    data = tmp_path / "study.jsonl"
    _invoke("collect", "export", "--db", db, "--out", str(data))
    exported = [json.loads(line) for line in data.read_text().splitlines()]
    assert sum(len(r.get("probes", [])) for r in exported) == int(probes.group(1))
    run = tmp_path / "run"
    models = [arg for model in MODELS for arg in ("--model", model)]
    cache = str(tmp_path / "cache.sqlite")
    _invoke(
        "run", "--data", str(data), *models, "--out", str(run), "--cache", cache, "--no-progress"
    )
    report = tmp_path / "report"
    _invoke("report", str(run), "--out", str(report), "--resamples", "500")
    summary: dict[str, Any] = json.loads((report / "summary.json").read_text())

    assert sorted(summary["self_consistency"]) == ["emotion", "preference"]
    for task, found in summary["self_consistency"].items():
        assert found["value"] is not None, (task, found)
        assert found["ci_low"] <= found["value"] <= found["ci_high"], (task, found)
        assert found["n_conversations"] >= 10 and found["chance"] is not None
        shares = summary["share_of_ceiling"][task]
        assert set(MODELS) <= set(shares), (task, sorted(shares))
        # A share is given exactly where the way from chance to the ceiling is sure to be some
        # (the ceiling's interval above chance); the probes fall at random, so either can occur.
        above = found["ci_low"] > found["chance"]
        for share in shares.values():
            assert (share["value"] is not None) == above, (task, found, share)
            assert above or "chance" in share["reason"], share
    page = (report / "report.html").read_text()
    assert "How close to the people&#39;s own ceiling?" in page
    assert "the people&#39;s own ceiling: not measured" in page  # the tasks no probe re-asks
