"""Guard: a task added with a module and its prompt file runs end to end, everywhere.

`toy/intense.py` and `toy/intense.toml` declare a yes/no task (in generate and choice form)
that the package has never heard of. It is registered beside the package's tasks for the whole
test run (`tests/conftest.py`), so every test that reads the tasks from the registry meets it,
and one that lists the tasks by hand fails. Here, imported before the command line starts (in
a child process, as a user's own module would be), it runs through `attunebench run` with the
stand-ins that answer without reading prompts and the fitted baselines (each `ok` on every
item: `baseline/majority` and `baseline/knn` learn it from the train split's items as the task
builds them), and appears in `report`, `data stats`, `export lm-eval` and the inspect tasks.
What else a new task takes is its metrics' independent computation
(`tests/tasks/test_metric_registry.py`) and its rows in `docs/tasks.md`: the files
`docs/development.md`'s "Adding a task" counts, which the last test holds it to.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from registered import cli_command, cli_env

TOY = Path(__file__).parent / "toy"
REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "development.md"
# The toy task named as a task (its name quoted, a metric of it, its module): the words of its
# prompts ("how intense was ...") are not.
NAMES_THE_TOY = re.compile(r"[\"'`]intense[.\"'`]|toy[./]intense")
# Where the toy is registered from outside the package, which a task inside it does not need,
# and the guide, which cites it.
HARNESS = {"tests/registered.py", "tests/tasks/test_new_task.py", "docs/development.md"}
TEXT_FILES = (".py", ".toml", ".md", ".json", ".jsonl", ".yml", ".yaml", ".html", ".txt")
STAND_INS = ("mock/default", "baseline/random", "sim/oracle")


def cli(*arguments: str) -> str:
    """The command line with the toy task imported first."""
    done = subprocess.run(
        [*cli_command(), *arguments], env=cli_env(), capture_output=True, text=True
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
    fitted = [f"baseline/majority?train={train}", f"baseline/knn?train={train}"]
    models = [*STAND_INS, "baseline/majority", "baseline/knn"]  # as records name them
    run = tmp_path / "run"
    chosen = [f"--model={m}" for m in [*STAND_INS, *fitted]]
    output = cli("run", f"--data={data}", *chosen, "--task=intense", f"--out={run}", "--no-cache")
    assert "not applicable" not in output
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert {r["model"] for r in records} == set(models)
    assert {r["status"] for r in records} == {"ok"}

    cli("report", str(run), f"--out={tmp_path / 'rep'}", "--include-simulated", "--resamples=100")
    summary = json.loads((tmp_path / "rep" / "summary.json").read_text())
    scored = {s["model"] for s in summary["scores"] if s["task"] == "intense"}
    assert scored == set(models)
    assert [(t["name"], t["n_items"]) for t in summary["tasks"]] == [("intense", 19)]


def test_a_new_task_is_counted_exported_and_offered_to_inspect(tmp_path: Path) -> None:
    stats = cli("data", "stats", str(sample_path()))
    assert any(line.split()[:1] == ["intense"] for line in stats.splitlines()), stats
    counted = json.loads(cli("data", "stats", str(sample_path()), "--json"))
    turns = [turn for c in read_conversations(sample_path()) for turn in c.turns]
    reported = sum(1 for turn in turns if turn.state and turn.state.intensity is not None)
    assert counted["gold"]["intense"] == {"items": reported} and reported > 0
    cli("export", "lm-eval", str(sample_path()), f"--out={tmp_path / 'lm-eval'}")
    assert (tmp_path / "lm-eval" / "attunebench_intense.yaml").is_file()
    pytest.importorskip("inspect_ai", reason="the `inspect` extra is not installed")
    from attunebench import inspect as attune_inspect  # in this process, the toy is registered

    assert "intense" in attune_inspect.INSPECT_TASKS


def guide() -> tuple[int, list[str]]:
    """How many files "Adding a task" says a new task touches, and the files its list names."""
    section = GUIDE.read_text(encoding="utf-8").split("## Adding a task")[1].split("\n## ")[0]
    count = re.search(r"\*\*(\d+) files\*\*", section)
    assert count is not None, "the guide says how many files a new task touches"
    return int(count.group(1)), re.findall(r"^\d+\. `([^`]+)`", section, flags=re.MULTILINE)


def files_naming_the_toy() -> set[str]:
    found = set()
    for folder in ("src", "tests", "docs", "benchmarks", "examples"):
        for path in (REPO / folder).rglob("*"):
            text = path.read_text(errors="replace") if path.suffix in TEXT_FILES else ""
            if NAMES_THE_TOY.search(text) and "__pycache__" not in path.parts:
                found.add(path.relative_to(REPO).as_posix())
    return found


def test_the_guide_counts_the_files_the_toy_task_touches() -> None:
    count, listed = guide()
    assert count == len(listed) <= 4
    module, prompt, *others = listed
    assert (module, prompt) == ("src/attunebench/tasks/NAME.py", "src/attunebench/tasks/NAME.toml")
    toy = {f"tests/tasks/toy/{p.name}" for p in TOY.iterdir() if p.suffix in (".py", ".toml")}
    assert toy == {"tests/tasks/toy/intense.py", "tests/tasks/toy/intense.toml"}
    # Every other file the toy task needed is one the guide lists, and each one it lists is
    # needed: no fifth file, and none listed for nothing.
    assert files_naming_the_toy() - HARNESS == toy | set(others)
