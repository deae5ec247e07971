"""A benchmark script that lacks something stops with one line naming it and status 77
(`testkit.prerequisites`); tests/benchmarks skips on that line, and fails on it
where the run requires the thing (.ci/run)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from testkit import prerequisites

REPO = Path(__file__).resolve().parents[2]


def stopped(capsys: pytest.CaptureFixture[str], call: Callable[[], object]) -> str:
    with pytest.raises(SystemExit) as stop:
        call()
    assert stop.value.code == prerequisites.SKIPPED
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_missing_corpora_are_named_in_one_line_with_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    absent = tmp_path / "absent"
    line = stopped(capsys, lambda: prerequisites.shared_data(absent))
    assert line.startswith(prerequisites.MISSING_DATA) and str(absent) in line
    assert prerequisites.shared_data(tmp_path) == tmp_path  # a folder that is there passes


def test_a_missing_server_is_a_prerequisite_line(capsys: pytest.CaptureFixture[str]) -> None:
    line = stopped(capsys, lambda: prerequisites.postgres_url(None))
    assert line.startswith(prerequisites.MISSING) and "PostgreSQL" in line
    assert prerequisites.postgres_url("postgresql://db") == "postgresql://db"


@pytest.mark.parametrize(
    ("line", "variable"),
    [
        (prerequisites.MISSING_DATA + "the corpora at /x", prerequisites.SHARED_DATA_VARIABLE),
        (prerequisites.MISSING + "llama.cpp's llama-server", prerequisites.REQUIRE_VARIABLE),
    ],
)
def test_each_kind_is_required_by_its_own_variable_alone(
    monkeypatch: pytest.MonkeyPatch, line: str, variable: str
) -> None:
    other = (
        {prerequisites.SHARED_DATA_VARIABLE, prerequisites.REQUIRE_VARIABLE} - {variable}
    ).pop()
    monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv(other, "1")
    assert not prerequisites.required(line)  # the other variable does not make it required
    monkeypatch.setenv(variable, "1")
    assert prerequisites.required(line)


def test_a_script_without_its_server_exits_77_naming_it() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ATTUNEBENCH_TEST_POSTGRES_URL"}
    found = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "collect_restart.py"), "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert found.returncode == prerequisites.SKIPPED, found.stderr[-2000:]
    assert found.stdout == ""  # no figures: nothing ran
    last = found.stderr.strip().splitlines()[-1]
    assert last.startswith(prerequisites.MISSING) and "PostgreSQL" in last
