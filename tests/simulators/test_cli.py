"""`attunebench simulators validate` as a user runs it: on MultiESC's test split, and refused
in one line when the simulator is one of the models it would rank."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from attunebench.data.importers import ESConvImporter
from attunebench.data.jsonl import write_conversations

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from cli_harness import attunebench, one_clear_line


def test_a_model_of_the_runs_is_refused(corpus: Path, oracle_runs: Path, tmp_path: Path) -> None:
    one_clear_line(
        attunebench(
            "simulators",
            "validate",
            "--simulator",
            "sim/oracle",
            "--data",
            corpus,
            "--runs",
            oracle_runs,
            "--out",
            tmp_path,
        ),
        "is oracle-95, a model of --runs",
    )


def test_the_person_oracle_on_multiesc(data_dir: Path, tmp_path: Path) -> None:
    test_split = ESConvImporter(variant="multiesc", split="test").read(
        data_dir / "esconv", Counter()
    )
    data = tmp_path / "multiesc-test.jsonl"
    write_conversations(data, list(test_split))
    out = tmp_path / "validated"
    ran = attunebench(
        "simulators",
        "validate",
        "--simulator",
        "sim/person-oracle",
        "--data",
        data,
        "--limit",
        10,
        "--out",
        out,
        "--no-cache",
        "--resamples",
        200,
    )
    assert ran.exit_code == 0, ran.output
    found = json.loads((out / "simulators.json").read_text())
    assert set(found) >= {"replay", "realism", "ranking", "noise_floor", "leaks", "simulator"}
    for figure in found["replay"].values():
        assert figure["value"] == 1.0
        assert {"ci_low", "ci_high", "crowd", "share_of_ceiling"} <= set(figure)
    realism = found["realism"]
    assert set(realism) == {
        "auroc",
        "emotion_by_third",
        "intensity_change",
        "negative_feedback_share",
    }
    assert realism["emotion_by_third"]["value"] is None and realism["emotion_by_third"]["reason"]
    assert {"spearman", "flips"} <= set(found["ranking"])
    pinned = found["simulator"]
    assert {"model", "prompt_digest", "sampling", "seeds"} <= set(pinned)
    assert "sim/person-oracle as the people" in ran.stdout


def test_validate_shows_a_runs_progress_on_a_terminal(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each step's bar, as `run` draws one (it said nothing for minutes with a real model);
    none with --no-progress."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # stderr taken for a terminal
    args = ["simulators", "validate", "--simulator", "sim/person-oracle", "--data", corpus]
    args += ["--limit", 3, "--no-cache", "--resamples", 100, "--seeds", 1]
    shown = attunebench(*args, "--out", tmp_path / "shown")
    assert shown.exit_code == 0, shown.output
    # The replay is a run: its bar is the run's, naming the person's models.
    for step in ("person/sim/person-o", "continuing", "seeking", "grading"):
        assert step in shown.stderr, shown.stderr
    assert "calls" in shown.stderr and "ETA" in shown.stderr
    quiet = attunebench(*args, "--out", tmp_path / "quiet", "--no-progress")
    assert quiet.exit_code == 0 and "ETA" not in quiet.stderr, quiet.stderr
