"""End to end through a real LLM server: `attunebench run` -> openai/ provider -> llama.cpp
serving Gemma 3 270M on 127.0.0.1 -> a complete run directory with real token counts.

The model follows instructions poorly, so answers may be `invalid`; what is checked is the
path: every planned item gets an answer-bearing record, and a re-run is served by the cache.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from attunebench.engine import read_ledger, read_records, read_run_info
from attunebench.models.llamacpp_server import LlamaServer
from attunebench.models.local_models import GEMMA
from attunebench.models.modelsfile import models_file_text
from testkit.local_entry import local_entry

pytestmark = [pytest.mark.llm, pytest.mark.timeout(360)]

SAMPLE = Path(__file__).parents[2] / "src" / "attunebench" / "data" / "sample" / "sample.jsonl"
# One task answered in JSON and the judged one; behavior and preference take the same path as
# emotion, and leaving them out keeps the test within a few minutes on two busy cores.
TASKS = ("emotion", "response")
MAX_TOKENS = 24


def attunebench_run(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from attunebench.cli import main; main()", "run", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_run_through_llama_cpp(gemma_server: LlamaServer, tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    # Free sampling: llama.cpp's JSON grammar costs several seconds a call on these cores.
    gemma = local_entry(
        GEMMA,
        name="gemma",
        answer="generate",
        max_tokens=MAX_TOKENS,
        base_url=gemma_server.base_url,
    )
    toml = models_file_text([gemma])
    models.write_text(toml, encoding="utf-8")
    common = [
        "--data",
        str(SAMPLE),
        "--models-file",
        str(models),
        "--model",
        "gemma",
        "--judge",
        "gemma",
        "--limit",
        "2",
        "--no-progress",
        "--cache",
        str(tmp_path / "cache.sqlite"),
    ]
    for task in TASKS:
        common += ["--task", task]
    out = tmp_path / "run"

    done = attunebench_run(*common, "--out", str(out))
    server_log = gemma_server.log.read_text(errors="replace")[-2000:]
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\nserver log:\n{server_log}"
    assert f"run directory: {out}" in done.stdout

    info = read_run_info(out)
    assert info is not None and info.complete
    assert info.models[0].spec == "openai/gemma-3-270m" and info.models[0].kind == "model"
    assert info.models[0].base_url == gemma_server.base_url

    records = read_records(out / "records.jsonl")
    assert len(records) == info.planned_items and {r.task for r in records} == set(TASKS)
    assert len({r.conversation_id for r in records}) == 2
    assert all(r.status in ("ok", "invalid") for r in records)  # answered, parsed or not
    assert all(r.raw_output for r in records if r.status == "invalid")
    assert all(r.input_tokens > 0 and r.calls >= 1 for r in records)

    ledger = read_ledger(out)
    assert ledger is not None
    roles = {entry.role for entry in ledger.entries}
    assert roles == {"subject", "judge"}  # response replies were judged by the served model
    for entry in ledger.entries:  # token counts are the server's usage figures
        assert entry.calls > 0 and entry.input_tokens > 10 * entry.calls
        assert 0 < entry.output_tokens <= MAX_TOKENS * entry.calls

    again = attunebench_run(*common, "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    assert " 0 calls, " in again.stdout  # a fully cached re-run asks the server nothing
