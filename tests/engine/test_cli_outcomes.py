"""Outcomes a user can act on, through `attunebench run`: what a default run leaves out and why,
permanent errors quoted and never retried, a wrong base URL stopped before anything is planned,
one-line errors, Ctrl-C, and quiet progress."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attunebench import __version__
from attunebench.cli import app
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.engine import read_ledger, read_records, read_run_info
from attunebench.tasks import load_tasks
from testkit.servers import FaultPlan, FaultServer

runner = CliRunner()
CLI = [str(Path(sys.executable).with_name("attunebench"))]


def attunebench(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def split(tmp_path: Path) -> tuple[Path, Path]:
    """The sample cut in two: evaluated data and a disjoint train split."""
    sample = read_conversations(sample_path())
    data, train = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    write_conversations(data, sample[1::2])
    write_conversations(train, sample[0::2])
    return data, train


def test_version() -> None:
    code, output = attunebench("--version")
    assert code == 0 and output.strip() == f"attunebench {__version__}"


def _unrated(conversation: Conversation) -> Conversation:
    turns = [
        t.model_copy(
            update={"responses": tuple(r.model_copy(update={"rating": None}) for r in t.responses)}
        )
        for t in conversation.turns
    ]
    return conversation.model_copy(update={"turns": tuple(turns)})


def test_the_default_run_leaves_out_judged_tasks_and_names_empty_ones(tmp_path: Path) -> None:
    out = tmp_path / "run"
    # the sample without its replies' ratings: the rating task has no item
    unrated = [_unrated(c) for c in read_conversations(sample_path())]
    data = tmp_path / "unrated.jsonl"
    write_conversations(data, unrated)
    code, output = attunebench(
        "run",
        "--data",
        str(data),
        "--out",
        str(out),
        "--model",
        "mock/default",
        "--limit",
        "2",
        "--no-cache",
        "--no-progress",
    )
    assert code == 0, output
    lines = output.splitlines()
    tasks = {name: load_tasks().get(name)() for name in load_tasks().names()}
    judged = sorted(name for name, task in tasks.items() if task.needs_judge)
    for task in judged:
        assert f"not applicable: task {task} for (every model) (needs a judge (--judge SPEC))" in (
            lines
        )
    first = unrated[:2]  # the --limit
    empty = sorted(n for n, t in tasks.items() if n not in judged and not any(t.items(first)))
    assert "rating" in empty  # no feedback, no rated reply
    for task in empty:
        assert f"no items: task {task} has nothing to score on this data" in lines
    info = read_run_info(out)
    assert info is not None and info.complete and info.empty_tasks == empty
    made = {r.task for r in read_records(out / "records.jsonl")}
    assert made == set(tasks) - set(judged) - set(empty)


def test_a_complete_run_whose_only_gaps_are_inapplicable_reruns_with_no_call(
    tmp_path: Path, split: tuple[Path, Path]
) -> None:
    data, train = split
    args = [
        "run",
        "--data",
        str(data),
        "--out",
        str(tmp_path / "run"),
        "--limit",
        "3",
        "--model",
        f"baseline/majority?train={train}",
        "--model",
        "baseline/lexicon",
        "--judge",
        "mock/judge",
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--no-progress",
    ]
    code, output = attunebench(*args)
    assert code == 0, output
    assert "not applicable: task outcome for baseline/lexicon (baseline/lexicon names " in output
    assert "failed" not in output.replace(", 0 failed", "")
    code, again = attunebench(*args)
    assert code == 0, again
    assert " 0 failed; 0 calls, 0 cache hits, 0 retries" in again


def test_out_naming_a_file_is_one_line(tmp_path: Path) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("mine\n", encoding="utf-8")
    code, output = attunebench(
        "run",
        "--data",
        str(sample_path()),
        "--out",
        str(taken),
        "--model",
        "mock/default",
        "--no-cache",
        "--no-progress",
    )
    assert code == 2 and "Traceback" not in output
    assert output.strip() == (
        f"error: --out {taken} is a file, not a run directory; choose another --out"
    )
    assert taken.read_text(encoding="utf-8") == "mine\n"


def models_file(tmp_path: Path, base_url: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(
        f'[models.subject]\nspec = "openai/subject"\nbase_url = "{base_url}"\n', encoding="utf-8"
    )
    return path


def test_a_server_answering_404_fails_each_item_once_and_the_summary_says_why(
    tmp_path: Path,
) -> None:
    plan = FaultPlan(fail_rate=0.0, permanent_rate=1.0, permanent_status=404)
    out = tmp_path / "run"
    with FaultServer(plan) as server:
        code, output = attunebench(
            "run",
            "--data",
            str(sample_path()),
            "--out",
            str(out),
            "--limit",
            "2",
            "--models-file",
            str(models_file(tmp_path, server.base_url)),
            "--model",
            "subject",
            "--task",
            "emotion",
            "--task",
            "behavior",
            "--no-cache",
            "--no-progress",
        )
        stats = server.stats()
    records = read_records(out / "records.jsonl")
    assert code == 1 and records
    assert all(r.status == "failed" and r.permanent and r.score is None for r in records)
    assert stats["requests"] == stats["refused"] == sum(r.calls for r in records)  # no retry
    ledger = read_ledger(out)
    assert ledger is not None and sum(e.retries for e in ledger.entries) == 0
    for task in ("behavior", "emotion"):
        count = sum(r.task == task for r in records)
        line = f"failed {count}x: subject on {task}: HTTP 404: "
        assert any(text.startswith(line) for text in output.splitlines()), output
    assert "refused on every attempt" in output
    assert f"0/{len(records)} items recorded, {len(records)} failed" in output


def test_a_base_url_without_its_api_path_stops_before_planning(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FaultServer(FaultPlan(fail_rate=0.0)) as server:
        root = server.base_url.removesuffix("/v1")
        code, output = attunebench(
            "run",
            "--data",
            str(sample_path()),
            "--out",
            str(out),
            "--models-file",
            str(models_file(tmp_path, root)),
            "--model",
            "subject",
            "--no-cache",
            "--no-progress",
        )
        requests = server.stats()["requests"]
    assert code == 2 and "Traceback" not in output
    [line] = output.strip().splitlines()
    assert f"{root}/models answered HTTP 404" in line and "usually ends in /v1" in line
    assert requests == 0 and not out.exists()


def test_ctrl_c_stops_promptly_with_exit_status_130(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text('[models.slow]\nspec = "mock/slow"\noptions = { latency_s = 60 }\n')
    out = tmp_path / "run"
    command = [
        *CLI,
        "run",
        "--data",
        str(sample_path()),
        "--out",
        str(out),
        "--models-file",
        str(models),
        "--model",
        "slow",
        "--task",
        "emotion",
        "--no-cache",
        "--no-progress",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (out / "run.json").exists():  # written once the calls can start
            assert process.poll() is None and time.monotonic() < deadline, "did not start"
            time.sleep(0.05)
        time.sleep(0.5)
        interrupted = time.monotonic()
        os.kill(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=20)
        took = time.monotonic() - interrupted
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert took < 5  # every call was a 60 s wait: none was waited out
    assert b"interrupted; what was recorded is kept" in err and b"Traceback" not in err
    info = read_run_info(out)
    assert info is not None and not info.complete and info.finished_at is not None


@pytest.mark.slow
def test_no_progress_means_no_model_loading_bars(tmp_path: Path, split: tuple[Path, Path]) -> None:
    pytest.importorskip("sentence_transformers")
    data, train = split
    command = [
        *CLI,
        "run",
        "--data",
        str(data),
        "--out",
        str(tmp_path / "run"),
        "--limit",
        "2",
        "--model",
        f"baseline/knn?train={train}",
        "--task",
        "emotion",
        "--no-cache",
        "--no-progress",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and "%|" not in done.stderr
    assert "preparing" not in done.stderr and not done.stderr.strip()
    assert json.loads((tmp_path / "run" / "run.json").read_text())["complete"] is True
