"""Guard: a task added with only a module and its prompt file runs end to end.

`toy/intense.py` and `toy/intense.toml` declare a yes/no task that the package has never
heard of. Imported before the command line starts (in a child process, so this session's
registries stay as shipped), it runs through `attunebench run` with the stand-ins that answer
without reading prompts (each `ok` on every item), is left out for the fitted baselines at
plan time (they answer only what their train split holds), and appears in `attunebench
report`'s summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attunebench
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path

TOY = Path(__file__).parent / "toy"
STAND_INS = ("mock/default", "baseline/random", "sim/oracle")


def cli(*arguments: str) -> str:
    """The command line with the toy task imported first."""
    source = str(Path(attunebench.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, str(TOY.parent)])}
    code = "import toy.intense; from attunebench.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, *arguments], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_the_toy_task_is_a_module_and_a_prompt_file() -> None:
    assert sorted(p.name for p in TOY.iterdir() if p.suffix in (".py", ".toml")) == [
        "intense.py",
        "intense.toml",
    ]


def test_a_new_task_runs_and_reports(tmp_path: Path) -> None:
    sample = read_conversations(sample_path())
    data, train = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    write_conversations(data, sample[1::2])
    write_conversations(train, sample[0::2])
    models = [*STAND_INS, f"baseline/majority?train={train}"]
    run = tmp_path / "run"
    chosen = [f"--model={m}" for m in models]
    output = cli("run", f"--data={data}", *chosen, "--task=intense", f"--out={run}", "--no-cache")
    assert "not applicable: task intense for baseline/majority" in output
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert {r["model"] for r in records} == set(STAND_INS)
    assert {r["status"] for r in records} == {"ok"}

    cli("report", str(run), f"--out={tmp_path / 'rep'}", "--include-simulated", "--resamples=100")
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    scored = {s["model"] for s in summary["scores"] if s["task"] == "intense"}
    assert scored == set(STAND_INS)
    assert [(t["name"], t["n_items"]) for t in summary["tasks"]] == [("intense", 19)]
