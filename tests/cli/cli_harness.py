"""Driving the CLI as a user does, and what a clear refusal looks like."""

from __future__ import annotations

from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from attunebench.cli import app

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "src" / "attunebench" / "data" / "sample" / "sample.jsonl"
runner = CliRunner()


def attunebench(*args: object) -> Result:
    return runner.invoke(app, [str(arg) for arg in args])


def one_clear_line(result: Result, *needles: str) -> str:
    """The error's stderr, once checked: exit != 0, no traceback, 1-2 lines, naming `needles`."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 2, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    return result.stderr


def run_args(tmp_path: Path, out: Path) -> list[object]:
    cache = tmp_path / "cache.sqlite"
    return ["run", "--data", SAMPLE, "--out", out, "--limit", 2, "--no-progress", "--cache", cache]


def csv_import(source: Path, out: Path, *more: str) -> Result:
    columns = ["--conversation-col", "conv", "--speaker-col", "who", "--text-col", "text"]
    return attunebench("data", "import", "csv", source, "-o", out, *columns, *more)
