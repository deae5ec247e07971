"""The README's five-minute tour runs as written, in a folder laid out as a fresh clone after
`make demo`: `.venv` (this test's own environment), `examples/`, and `../shared/data` beside it.

Nothing in the commands is substituted. The tour carries `--limit 20` and offline models only,
so it runs in about a minute (the imports, a judge's embeddings, a report and a power
simulation); it is the README's promise, so it is checked whole rather than command by command.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOUR = re.compile(r"^## A five-minute tour\n+```bash\n(.*?)^```", re.M | re.S)


def tour_commands() -> str:
    found = TOUR.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert found is not None, "README.md has no five-minute tour block"
    return found.group(1)


def fresh_clone(tmp_path: Path, data_dir: Path) -> Path:
    """A folder holding what a fresh clone holds after `make demo`, by links."""
    venv = Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file():
        pytest.skip(f"not run from a virtual environment ({venv} has no bin/activate)")
    clone = tmp_path / "attunebench"
    clone.mkdir()
    (clone / ".venv").symlink_to(venv)
    (clone / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data_dir)
    return clone


@pytest.mark.slow
def test_the_readme_tour_runs_as_written(tmp_path: Path, data_dir: Path) -> None:
    commands = tour_commands()
    assert commands.startswith("source .venv/bin/activate\n")
    assert "--limit 20" in commands
    clone = fresh_clone(tmp_path, data_dir)
    # the run cache of a fresh machine, not this one's
    env = {**os.environ, "ATTUNEBENCH_CACHE": str(tmp_path / "cache.sqlite")}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", commands],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for made in ("test.jsonl", "valid.jsonl", "report/report.html", "report/summary.json"):
        assert (clone / made).is_file(), made
    assert "conversations for 80% power" in done.stdout
    assert "sim-oracle minus baseline/random" in done.stdout
    # The report says something at a glance: a leader of some task, not "nothing ranked".
    summary = json.loads((clone / "report" / "summary.json").read_text(encoding="utf-8"))
    assert any(lead["leader"] == "sim-oracle" for lead in summary["leads"]), summary["leads"]


def test_the_readme_names_what_the_tour_leaves_to_the_reader() -> None:
    """--include-simulated (why the tour's report ranks anything) and --person (the gap)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--include-simulated" in tour_commands()
    assert "`run --person" in readme and "person gap" in readme
