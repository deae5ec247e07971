"""A run split with `--shard i/N`, run as parallel processes, and joined with `merge`: the merged
records equal a single run's, and shards that are not one plan cut N ways are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import attunebench
from attunebench.cli import app
from attunebench.data.sample import sample_path
from attunebench.engine import Shard, parse_shard
from testkit.records import diff_records, run_records

MODELS = ["--model", "mock/default", "--model", "baseline/longer", "--model", "baseline/random"]
TASKS = ["--task", "emotion", "--task", "behavior", "--task", "rating"]
SRC = str(Path(attunebench.__file__).parents[1])


def command(out: Path, *extra: str) -> list[str]:
    cli = [sys.executable, "-c", "from attunebench.cli import main; main()"]
    base = [*cli, "run", "--data", str(sample_path())]
    return [*base, *MODELS, *TASKS, "--no-cache", "--no-progress", "--out", str(out), *extra]


def run_all(commands: list[list[str]]) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    started = [subprocess.Popen(c, env=env, **pipes) for c in commands]
    for process in started:
        output, error = process.communicate(timeout=240)
        assert process.returncode == 0, output + error


def merge(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["merge", *args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shards")
    shards = [command(root / f"shard{i}", "--shard", f"{i}/3") for i in (1, 2, 3)]
    run_all([command(root / "single"), *shards])  # four processes at once
    return root


@pytest.mark.timeout(300)
def test_three_parallel_shards_merge_to_a_single_runs_records(runs: Path) -> None:
    code, output = merge(*(str(runs / f"shard{i}") for i in (1, 2, 3)), "--out", str(runs / "m"))
    assert code == 0, output
    single, merged = run_records(runs / "single"), run_records(runs / "m")
    assert single and diff_records(single, merged) == []
    shares = [len(run_records(runs / f"shard{i}")) for i in (1, 2, 3)]
    assert all(shares) and sum(shares) == len(single)  # each shard did a part, none twice
    info = json.loads((runs / "m" / "run.json").read_text("utf-8"))
    whole = json.loads((runs / "single" / "run.json").read_text("utf-8"))
    assert info["planned_items"] == whole["planned_items"] and info["complete"]
    assert info["shard"] is None and info["dataset_ids"] == whole["dataset_ids"]
    ids = [json.loads(line)["id"] for line in (runs / "m" / "conversations.jsonl").open()]
    assert len(ids) == len(set(ids))
    report = CliRunner().invoke(app, ["report", str(runs / "m"), "--out", str(runs / "report")])
    assert report.exit_code == 0, report.output  # the analysis reads it as any run


@pytest.mark.timeout(300)
def test_overlapping_missing_or_foreign_shards_are_refused(runs: Path) -> None:
    one, two = str(runs / "shard1"), str(runs / "shard2")
    for args, said in [
        ([one, two], "shard 3/3 missing"),
        ([one, one, two], "are both shard 1/3"),
        ([one, two, str(runs / "single")], "not a shard"),
    ]:
        code, output = merge(*args, "--out", str(runs / "refused"))
        lines = [line for line in output.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and said in lines[0], output
    renamed = runs / "other"
    renamed.mkdir()
    for name in ("records.jsonl", "conversations.jsonl", "ledger.json"):
        (renamed / name).write_bytes((runs / "shard3" / name).read_bytes())
    info = json.loads((runs / "shard3" / "run.json").read_text("utf-8"))
    (renamed / "run.json").write_text(json.dumps({**info, "seed": 7}), "utf-8")
    code, output = merge(one, two, str(renamed), "--out", str(runs / "refused"))
    assert code == 2 and "seed differ" in output
    (renamed / "run.json").write_text(json.dumps({**info, "shard": "2/3"}), "utf-8")
    code, output = merge(one, str(renamed), two, "--out", str(runs / "refused"))
    assert code == 2 and "both shard 2/3" in output


def test_shards_split_by_conversation_evenly_and_deterministically() -> None:
    ids = [f"conv-{n}" for n in range(3000)]
    owners = [[i for i in (1, 2, 3, 4) if Shard(i, 4).holds(c)] for c in ids]
    assert all(len(o) == 1 for o in owners)  # each conversation in exactly one shard
    sizes = [sum(o == [i] for o in owners) for i in (1, 2, 3, 4)]
    assert all(650 < size < 850 for size in sizes)  # about a quarter each
    assert parse_shard("2/4") == Shard(2, 4)
    for bad in ("0/3", "4/3", "a/b", "3"):
        with pytest.raises(ValueError, match="expected i/N"):
            parse_shard(bad)


def test_a_bad_shard_is_refused_in_one_line(tmp_path: Path) -> None:
    args = ["run", "--data", str(sample_path()), "--model", "mock/default", "--no-progress"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r"), "--shard", "4/3"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "expected i/N" in lines[0]
    assert not (tmp_path / "r").exists()
