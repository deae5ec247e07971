"""A GGUF file of the user's own, named by path in a models file, serves a run through `local/`
as the pinned models do (issue 43): SmolLM2's file copied under another name, with its digest.
The run's llama-server is accounted in ledger.json and stopped; a wrong `sha256` is refused in
one line before any server starts; SIGTERM to a run in generate mode keeps what was recorded,
leaves no server behind and exits 143."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attunebench.engine import read_ledger, read_records, read_run_info
from attunebench.models.local_models import SMOLLM2, LocalModelError

pytestmark = [pytest.mark.llm, pytest.mark.timeout(400)]

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "src" / "attunebench" / "data" / "sample" / "sample.jsonl"


@pytest.fixture
def own_file(tmp_path: Path, llama_server_binary: Path) -> Path:
    try:
        packaged = SMOLLM2.path()
    except LocalModelError as error:
        pytest.skip(f"SmolLM2 is not installed: {error}")
    return Path(shutil.copy(packaged, tmp_path / "my-own-model.gguf"))


def models_file(tmp_path: Path, sha256: str, answer: str = "choice") -> Path:
    models = tmp_path / f"models-{answer}-{sha256[:4]}.toml"
    models.write_text(
        f'[models.mine]\nspec = "local/my-own-model"\nanswer = "{answer}"\n'
        "params = { temperature = 0.0, max_tokens = 48, seed = 0 }\n"
        f'options = {{ file = "my-own-model.gguf", sha256 = "{sha256}" }}\n'
    )
    return models


def command(models: Path, out: Path, task: str, *more: str) -> list[str]:
    said = [sys.executable, "-c", "from attunebench.cli import main; main()", "run"]
    said += ["--data", str(SAMPLE), "--models-file", str(models), "--model", "mine"]
    return [*said, "--task", task, "--no-progress", "--out", str(out), "--no-cache", *more]


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (the run's llama-server)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(") ", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_file_by_path_runs_with_its_server_accounted(own_file: Path, tmp_path: Path) -> None:
    env = {**os.environ, "ATTUNEBENCH_LOG_DIR": str(tmp_path / "logs")}
    wrong = models_file(tmp_path, "0" * 64)
    refused = subprocess.run(
        command(wrong, tmp_path / "refused", "outcome"), capture_output=True, text=True, env=env
    )
    assert refused.returncode == 2
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(own_file) in lines[0] and SMOLLM2.sha256 in lines[0], lines
    assert not (tmp_path / "logs").exists() and not (tmp_path / "refused").exists()

    out = tmp_path / "run"
    models = models_file(tmp_path, SMOLLM2.sha256)
    done = subprocess.run(
        command(models, out, "outcome", "--limit", "2"), capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    info = read_run_info(out)
    assert info is not None and info.complete and info.models[0].spec == "local/my-own-model"
    records = read_records(out / "records.jsonl")
    assert records and all(r.status == "ok" and r.mode == "choice" for r in records)
    ledger = read_ledger(out)
    assert ledger is not None
    server = ledger.servers["mine"]
    assert server.requests == sum(entry.calls for entry in ledger.entries) + 2  # and pre-flight
    assert server.prompt_n + server.cache_n > 0 and server.prompt_ms > 0
    assert list((tmp_path / "logs").iterdir()) == []  # stopped as planned


def test_sigterm_leaves_no_server_and_keeps_the_records(own_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    models = models_file(tmp_path, SMOLLM2.sha256, answer="generate")
    env = {**os.environ, "ATTUNEBENCH_LOG_DIR": str(tmp_path / "logs")}
    run = subprocess.Popen(
        command(models, out, "emotion"), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    servers: list[int] = []
    try:
        records = out / "records.jsonl"
        deadline = time.monotonic() + 300
        while not (records.exists() and records.read_text().strip()):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "no record in 300 s"
            servers = servers or children(run.pid)
            time.sleep(0.2)
        servers = servers or children(run.pid)
        assert servers and all(alive(pid) for pid in servers)
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
        for pid in servers:  # a regression must not leave a server at 100% of a core
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert run.returncode == 143, stderr
    assert b"stopped by SIGTERM; what was recorded is kept" in stderr
    assert not any(alive(pid) for pid in servers)
    kept = read_records(out / "records.jsonl")
    assert kept and all(r.mode == "generate" for r in kept)
    ledger = read_ledger(out)
    assert ledger is not None and ledger.servers["mine"].requests >= 1
