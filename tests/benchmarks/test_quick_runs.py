"""Every script under benchmarks/ runs with `--quick` (the same code path on a tiny input) and
prints its figures as a JSON object on its last line. The folder is listed, so a new script
without `--quick` fails here. A script missing something a machine may lack (the shared
corpora, PostgreSQL, llama.cpp's server, a model file) exits 77 naming it
(`testkit.prerequisites`): a skip with that reason, a failure under CI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from testkit.prerequisites import SKIPPED, required

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (REPO / "benchmarks").glob("*.py") if not p.name.startswith("_"))
TIMEOUT_S = 600  # one script on a busy machine; together 4-8 minutes under a load of 2-10

# JSON keys that checks outside the project read, with the keys each holds, level by level.
SHAPES: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {
    "validity.py": {
        "coverage_macro_f1": (
            ("emotion_1", "emotion_turns", "behavior", "two_parts"),
            ("10", "20", "50"),
            ("coverage", "bias"),
        ),
        "ppi_scenarios": (
            ("same", "audited_better", "audited_slightly_better", "verbosity_bias", "small_audit"),
            ("corrected_share", "coverage", "widened_by"),
        ),
        "power_calibration": (
            ("emotion", "rating"),
            (
                "planted_difference",
                "true_n80",
                "true_power",
                "studies_per_size",
                "range_coverage",
                "median_named_n",
                "named_share",
                "pilots",
                "pilot_conversations",
            ),
        ),
    },
}


def assert_references_on_shuffled_gold(figures: dict[str, Any]) -> None:
    """validity.py: every headline task's references on shuffled gold, each a number; the
    in-sample length-only fit is there to show the trap."""
    tasks = set(figures["headline_metrics"])
    shuffled = figures["references_on_shuffled_gold"]
    assert set(shuffled) == tasks == set(figures["references_shuffled_chance"])
    for task, references in shuffled.items():
        assert "reference/constant" in references or "reference/later-reply" in references, task
        assert all(isinstance(value, float) for value in references.values()), task
    in_sample = figures["references_in_sample_on_shuffled_gold"]
    assert all("reference/length-only" in in_sample[task] for task in ("rating", "outcome"))
    assert figures["trivial_headlines"]["outcome"]["reference/length-only"]


def assert_corpus_part_references(figures: dict[str, Any]) -> None:
    """validity.py: on the headlines read within corpus parts, a rule that knows only the part
    (and for outcome which fields are asked) scores within 0.03 of reference/constant, on
    every corpus it was scored on."""
    found = figures["corpus_part_references"]
    assert set(found) == {"rating", "outcome", "emotion"}
    assert "field-set rule" in found["outcome"]
    for task, rows in found.items():
        for corpus, constant in rows["reference/constant"].items():
            for rule in ("corpus-part rule", "field-set rule"):
                if rule in rows:
                    assert abs(rows[rule][corpus] - constant) <= 0.03, (task, rule, corpus)


def assert_validity(figures: dict[str, Any]) -> None:
    assert_references_on_shuffled_gold(figures)
    assert_corpus_part_references(figures)


def assert_ladder(figures: dict[str, Any]) -> None:
    """ladder.py: the second slice ran (SmolLM2 with its twins on the next conversation of
    emotion), and every person gap of the first slice has a verdict: emotion's read on both
    slices, the others first slice only."""
    second = figures["second_slice"]
    assert second["after"] == figures["conversations"] == 1 and second["conversations"] == 1
    assert set(second["headline"]) == {"emotion"} and second["person_gap"]["emotion"]
    gaps = figures["replication"]["person_gap"]
    assert set(gaps) == set(figures["person_gap"]), gaps
    for task, by_model in gaps.items():
        for verdict in by_model.values():
            assert (verdict["holds"] == "first slice only") == (task != "emotion"), (task, verdict)


# Checks beyond the shape, per script.
CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "validity.py": assert_validity,
    "ladder.py": assert_ladder,
}


def assert_shape(found: object, levels: tuple[tuple[str, ...], ...], where: str) -> None:
    if not levels:
        return
    assert isinstance(found, dict) and sorted(found) == sorted(levels[0]), (where, found)
    for key, inner in found.items():
        assert_shape(inner, levels[1:], f"{where}.{key}")


def test_the_folder_holds_the_benchmarks() -> None:
    assert len(SCRIPTS) >= 10, [p.name for p in SCRIPTS]


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_quick_run_prints_its_figures_last(script: Path) -> None:
    started = time.perf_counter()
    found = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        check=False,
    )
    seconds = time.perf_counter() - started
    if found.returncode == SKIPPED:
        reason = (found.stderr.strip().splitlines() or ["no reason given"])[-1]
        if required(reason):
            pytest.fail(f"{script.name}: {reason}, and this run requires it")
        pytest.skip(f"{script.name}: {reason}")
    tail = found.stderr[-3000:]
    assert found.returncode == 0, f"{script.name} --quick exited {found.returncode}:\n{tail}"
    lines = found.stdout.strip().splitlines()
    assert lines, f"{script.name} --quick printed nothing:\n{tail}"
    figures = json.loads(lines[-1])
    assert isinstance(figures, dict) and figures, lines[-1][:500]
    for key, levels in SHAPES.get(script.name, {}).items():
        assert_shape(figures.get(key), levels, f"{script.name} {key}")
    if script.name in CHECKS:
        CHECKS[script.name](figures)
    print(f"{script.name} --quick: {seconds:.1f} s")  # `pytest -s` lists each one's time
