"""A local model named in the shipped models file serves a run with no server started by hand:
`run --models-file examples/models.toml --model smollm2-135m-instruct` starts llama-server with
SmolLM2's verified file, answers in choice mode, records what the server reported doing in
ledger.json, and stops it. Two sample conversations' outcome questions: a few seconds."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attunebench.engine import read_ledger, read_records, read_run_info
from attunebench.models.local_models import SMOLLM2, LocalModelError

pytestmark = [pytest.mark.llm, pytest.mark.timeout(300)]

ROOT = Path(__file__).parents[2]
SAMPLE = ROOT / "src" / "attunebench" / "data" / "sample" / "sample.jsonl"


def test_a_named_local_model_serves_a_run_and_reports_its_server(
    tmp_path: Path, llama_server_binary: Path
) -> None:
    try:
        SMOLLM2.path()
    except LocalModelError as error:
        pytest.skip(f"SmolLM2 is not installed: {error}")
    out = tmp_path / "run"
    command = [sys.executable, "-c", "from attunebench.cli import main; main()", "run"]
    command += ["--data", str(SAMPLE), "--models-file", str(ROOT / "examples" / "models.toml")]
    command += ["--model", SMOLLM2.name, "--task", "outcome", "--limit", "2", "--no-progress"]
    command += ["--out", str(out), "--cache", str(tmp_path / "cache.sqlite")]
    env = {**os.environ, "ATTUNEBENCH_LOG_DIR": str(tmp_path / "logs")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"

    info = read_run_info(out)
    assert info is not None and info.complete
    assert info.models[0].spec == f"local/{SMOLLM2.name}" and info.models[0].answer == "choice"
    records = read_records(out / "records.jsonl")
    assert records and all(r.status == "ok" and r.mode == "choice" for r in records)
    for record in records:
        for distribution in (record.distributions or {}).values():
            assert math.isclose(sum(distribution.probabilities.values()), 1.0, abs_tol=1e-6)

    ledger = read_ledger(out)
    assert ledger is not None
    server = ledger.servers[SMOLLM2.name]
    calls = sum(entry.calls for entry in ledger.entries)
    input_tokens = sum(entry.input_tokens for entry in ledger.entries)
    assert server.requests == calls + 2  # and the pre-flight's two
    assert server.prompt_n + server.cache_n > input_tokens > 0  # the pre-flight's too
    assert server.predicted_n >= calls and server.prompt_ms > 0
    share = server.busy_share()
    assert share is not None and 0 < share < 1
    assert list((tmp_path / "logs").iterdir()) == []  # stopped as planned: its log removed
