"""A run stopped from outside (issue 43): SIGTERM, what Slurm, Kubernetes and `timeout` send, is
taken as Ctrl-C is. What was recorded is kept, every server the run started is stopped, and the
exit code says which signal stopped it (143; 130 for Ctrl-C); the same command resumes it. A
signal that lands once every item is recorded stops nothing: the run exits 0.

The `local/` run here is a child process serving a small GGUF file of the user's own through
fake_llama_server.py; tests/e2e/test_local_gguf_file.py sends SIGTERM to a real llama-server's
run."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_harness import SAMPLE, attunebench, run_args

from attunebench.engine import read_ledger, read_records, read_run_info
from attunebench.engine.wiring import bind_models, close_models

ROOT = Path(__file__).parents[2]
FAKE_SERVER = ROOT / "tests" / "models" / "fake_llama_server.py"


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, exited but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def tiny_gguf(path: Path) -> Path:
    gguf = pytest.importorskip("gguf", reason="the llm extra (gguf) is not installed")
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_chat_template("{% for m in messages %}{{ m.content }}{% endfor %}")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def local_run(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """`attunebench run` of a `local/` model whose server is the fake, in a child process."""
    binary = tmp_path / "llama-server"
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_SERVER}" "$@"\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    models = tmp_path / "models.toml"
    tiny_gguf(tmp_path / "mine.gguf")
    models.write_text(
        '[models.mine]\nspec = "local/mine"\nanswer = "choice"\noptions = { file = "mine.gguf" }\n'
    )
    command = [sys.executable, "-c", "from attunebench.cli import main; main()", "run"]
    command += ["--data", str(SAMPLE), "--models-file", str(models), "--model", "mine"]
    command += ["--task", "emotion", "--no-progress", "--out", str(tmp_path / "run")]
    command += ["--cache", str(tmp_path / "cache.sqlite")]
    env = {
        **os.environ,
        "ATTUNEBENCH_LLAMA_SERVER": str(binary),
        "ATTUNEBENCH_MODEL_DIR": str(tmp_path / "models"),
        "ATTUNEBENCH_LOG_DIR": str(tmp_path / "logs"),
        "FAKE_LLAMA_PIDS": str(tmp_path / "pids"),
    }
    return command, env


def started_servers(tmp_path: Path) -> list[int]:
    pids = tmp_path / "pids"
    return [int(pid) for pid in pids.read_text().split()] if pids.exists() else []


def wait_for(condition: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.timeout(120)
def test_sigterm_keeps_the_records_stops_the_server_and_says_so(tmp_path: Path) -> None:
    command, env = local_run(tmp_path)
    records = tmp_path / "run" / "records.jsonl"
    slow = {**env, "FAKE_LLAMA_DELAY": "0.3"}  # each answer: the run is still going
    child = subprocess.Popen(command, env=slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: records.exists() and records.read_text().count("\n") >= 2, 60)
        [server] = started_servers(tmp_path)
        assert alive(server)
        child.send_signal(signal.SIGTERM)
        _, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
        for pid in started_servers(tmp_path):  # a regression must not leave one running
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert child.returncode == 128 + signal.SIGTERM, stderr
    said = [line for line in stderr.decode().splitlines() if line.strip()]
    assert len(said) == 1 and "stopped by SIGTERM; what was recorded is kept" in said[0], said
    assert not alive(server)
    kept = read_records(records)
    info = read_run_info(tmp_path / "run")
    assert info is not None and not info.complete and kept
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None and ledger.servers["mine"].requests >= len(kept)

    resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    again = read_records(records)
    assert {r.key for r in kept} <= {r.key for r in again}
    assert len(again) == len({r.key for r in again})  # nothing answered twice
    servers = started_servers(tmp_path)
    assert len(servers) == 2 and not any(alive(pid) for pid in servers)


@pytest.mark.timeout(60)
def test_sigterm_while_the_server_loads_stops_it_at_once(tmp_path: Path) -> None:
    """The server's start blocks the run until its model has loaded (here 30 s): SIGTERM
    stops it then and there, before a scheduler's SIGKILL would orphan it."""
    command, env = local_run(tmp_path)
    loading = {**env, "FAKE_LLAMA_LOAD": "30"}
    child = subprocess.Popen(command, env=loading, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: started_servers(tmp_path), 30)
        [server] = started_servers(tmp_path)
        time.sleep(0.5)  # the run is waiting for it
        child.send_signal(signal.SIGTERM)
        began = time.monotonic()
        _, stderr = child.communicate(timeout=20)
        took = time.monotonic() - began
    finally:
        if child.poll() is None:
            child.kill()
        for pid in started_servers(tmp_path):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert child.returncode == 128 + signal.SIGTERM, stderr
    assert took < 15 and not alive(server)
    assert b"stopped by SIGTERM" in stderr and b"Traceback" not in stderr


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_after_every_item_is_recorded_exits_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: signal.Signals
) -> None:
    """The signal lands as the run closes its models, its records all written: a run that
    finished, not one that was stopped (it said its summary, then exited 130)."""

    async def close_then_signal(bound: object) -> None:
        await close_models(bound)  # type: ignore[arg-type]
        os.kill(os.getpid(), stop)

    monkeypatch.setattr("attunebench.engine.runner.close_models", close_then_signal)
    out = tmp_path / "run"
    result = attunebench(*run_args(tmp_path, out), "--model", "mock/default", "--task", "emotion")
    assert result.exit_code == 0, result.output
    assert f"{stop.name} came after every item was recorded" in result.output
    info = read_run_info(out)
    assert info is not None and info.complete


def test_a_signal_before_the_end_exits_with_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (here, a SIGINT) as the models are bound: 130, and the line that says so."""

    async def bind_then_interrupt(*args: object, **kwargs: object) -> object:
        bound = await bind_models(*args, **kwargs)  # type: ignore[arg-type]
        os.kill(os.getpid(), signal.SIGINT)
        return bound

    monkeypatch.setattr("attunebench.engine.runner.bind_models", bind_then_interrupt)
    out = tmp_path / "run"
    result = attunebench(*run_args(tmp_path, out), "--model", "mock/default", "--task", "emotion")
    assert result.exit_code == 130, result.output
    assert "interrupted; what was recorded is kept" in result.stderr
