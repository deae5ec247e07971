"""Choice mode through a real LLM server: Gemma 3 270M (a base model that cannot write the JSON
a generated answer needs) answers every choice question with next-token probabilities read
from llama.cpp, so no item is invalid.

Under CI the server must be llama.cpp's C++ `llama-server` (built by `make llama-server`), the
one `make demo-llm` relies on for speed.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attunebench.engine import read_records, read_run_info
from attunebench.models.llamacpp_server import LlamaServer
from attunebench.models.local_models import GEMMA
from attunebench.models.modelsfile import models_file_text
from testkit.local_entry import local_entry

pytestmark = [pytest.mark.llm, pytest.mark.timeout(420)]

SAMPLE = Path(__file__).parents[2] / "src" / "attunebench" / "data" / "sample" / "sample.jsonl"
TASKS = ("emotion", "preference", "behavior")


def test_choice_answers_are_probabilities_read_from_the_server(
    gemma_server: LlamaServer, tmp_path: Path
) -> None:
    if os.environ.get("CI", "").lower() == "true":
        assert gemma_server.binary is not None, "CI runs make llama-server; no binary was found"
    models = tmp_path / "models.toml"
    gemma = local_entry(GEMMA, name="gemma", max_tokens=8, base_url=gemma_server.base_url)
    models.write_text(models_file_text([gemma]))
    out = tmp_path / "run"
    command = [sys.executable, "-c", "from attunebench.cli import main; main()", "run"]
    command += ["--data", str(SAMPLE), "--models-file", str(models), "--model", "gemma"]
    command += ["--limit", "1", "--no-progress", "--out", str(out)]
    command += ["--cache", str(tmp_path / "cache.sqlite")]
    for task in TASKS:
        command += ["--task", task]
    done = subprocess.run(command, capture_output=True, text=True, timeout=360)
    server_log = gemma_server.log.read_text(errors="replace")[-2000:]
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\nserver log:\n{server_log}"

    info = read_run_info(out)
    assert info is not None and info.complete and info.models[0].answer == "choice"
    records = read_records(out / "records.jsonl")
    assert {r.task for r in records} == set(TASKS)
    assert [r for r in records if r.status != "ok"] == []  # a base model, and nothing invalid
    for record in records:
        assert record.mode == "choice" and record.distributions and record.calls >= 1
        for distribution in record.distributions.values():
            probabilities = distribution.probabilities
            assert len(probabilities) >= 2 and all(p >= 0 for p in probabilities.values())
            # Renormalised over the offered keys, read from the server's top log probabilities.
            assert math.isclose(sum(probabilities.values()), 1.0, abs_tol=1e-6)
    # The served model is not a uniform guesser: its probabilities differ between questions.
    spreads = {
        round(max(d.probabilities.values()), 4) for r in records for d in r.distributions.values()
    }
    assert len(spreads) > 1
