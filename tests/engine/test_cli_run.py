"""`attunebench run` end to end with the mock provider, and its clear errors (no tracebacks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import attunebench.tasks.emotion  # registers the task these runs use
from attunebench.cli import app
from attunebench.engine import read_records, read_run_info

SAMPLE = Path(__file__).parents[2] / "src" / "attunebench" / "data" / "sample" / "sample.jsonl"
runner = CliRunner()


def attunebench(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def base(tmp_path: Path) -> list[str]:
    return [
        "run",
        "--data",
        str(SAMPLE),
        "--task",
        "emotion",
        "--limit",
        "2",
        "--no-progress",
        "--cache",
        str(tmp_path / "cache.sqlite"),
    ]


def test_a_mock_run_writes_the_run_directory_and_resumes(base: list[str], tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, output = attunebench(
        *base, "--model", "mock/default", "--out", str(out), "--context", "both"
    )
    assert code == 0, output
    assert f"run directory: {out}" in output
    info = read_run_info(out)
    assert info is not None and info.complete and info.models[0].kind == "mock"
    assert list(info.task_options) == ["emotion"]
    assert info.task_options["emotion"]["context"] == "both"
    records = read_records(out / "records.jsonl")
    assert records and {r.variant for r in records} == {"blind", "informed"}
    assert len({r.conversation_id for r in records}) == 2

    code, output = attunebench(
        *base, "--model", "mock/default", "--out", str(out), "--context", "both"
    )
    assert code == 0 and " 0 calls, 0 cache hits" in output  # nothing left to do

    code, output = attunebench(
        *base, "--model", "mock/default", "--out", str(tmp_path / "b"), "--context", "both"
    )
    assert code == 0 and f" 0 calls, {len(records)} cache hits" in output


def test_models_file_names_are_used_in_records(base: list[str], tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text('[models.scripted]\nspec = "mock/default"\nparams = { max_tokens = 9 }\n')
    out = tmp_path / "run"
    code, output = attunebench(
        *base, "--models-file", str(models), "--model", "scripted", "--out", str(out)
    )
    assert code == 0, output
    assert {r.model for r in read_records(out / "records.jsonl")} == {"scripted"}
    info = json.loads((out / "run.json").read_text())
    assert info["models"][0]["name"] == "scripted" and info["models"][0]["params"] == {
        "max_tokens": 9
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "gpt4"], "neither a models-file name"),
        (["--model", "nope/x"], "unknown provider 'nope'"),
        (["--model", "mock/default", "--task", "nope"], "unknown task 'nope'"),
        (["--model", "openai/gpt-4o-mini"], "OPENAI_API_KEY is not set"),
        (["--model", "mock/default", "--models-file", "absent.toml"], "no such models file"),
        (["--model", "mock/default", "--task", "response"], "needs at least one judge"),
    ],
)
def test_mistakes_get_one_clear_line(
    base: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    out = tmp_path / "run"
    code, output = attunebench(*base, *args, "--out", str(out))
    assert code == 2 and message in output and "Traceback" not in output
    assert not out.exists()  # nothing written for a run that could not start


def test_an_unreachable_server_is_named(base: list[str], tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text('[models.local]\nspec = "openai/x"\nbase_url = "http://127.0.0.1:9/v1"\n')
    code, output = attunebench(
        *base, "--models-file", str(models), "--model", "local", "--out", str(tmp_path / "run")
    )
    assert code == 2 and "cannot reach http://127.0.0.1:9/v1" in output


def test_invalid_data_is_located(base: list[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    args = [*base, "--model", "mock/default", "--out", str(tmp_path / "run")]
    args[args.index(str(SAMPLE))] = str(bad)
    code, output = attunebench(*args)
    assert code == 2 and f"{bad}:1" in output and "Traceback" not in output


def test_a_rundir_of_another_plan_is_refused(base: list[str], tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    assert attunebench(*base, "--model", "mock/default", "--out", out)[0] == 0
    code, output = attunebench(*base, "--model", "mock/other", "--out", out)
    assert code == 2 and "holds a different run" in output
