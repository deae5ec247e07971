"""`benchmarks/validity.py --quick` runs every key on a tiny input and prints its JSON line
last, with the references' headlines on shuffled gold for every headline task."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attunebench

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "validity.py"


def test_validity_quick_prints_the_references_on_shuffled_gold(
    data_dir: Path, tmp_path: Path
) -> None:
    source = str(Path(attunebench.__file__).parents[1])
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--quick",
            "--data-dir",
            str(data_dir),
            "--work",
            str(tmp_path),
        ],
        env={**os.environ, "PYTHONPATH": source},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    tasks = set(found["headline_metrics"])
    shuffled = found["references_on_shuffled_gold"]
    assert set(shuffled) == tasks == set(found["references_shuffled_chance"])
    for task, references in shuffled.items():
        assert "reference/constant" in references or "reference/later-reply" in references
        assert references == {
            name: value for name, value in references.items() if isinstance(value, float)
        }, task
    # length-only, fitted on the items it guesses, is there to show the trap
    assert all(
        "reference/length-only" in found["references_in_sample_on_shuffled_gold"][t]
        for t in ("rating", "outcome")
    )
    assert found["trivial_headlines"]["outcome"]["reference/length-only"]
