"""The instruction-tuned real model: Qwen2.5-Coder 0.5B Instruct behind llama.cpp, through its
chat template. It writes the JSON that generated answers need, gives choice-mode probabilities,
and judges replies, so the judged task runs with a real judge rather than a proxy.

What is checked is the path and that the model reads its prompts: the generated answers parse
(not a base model's 100% invalid) and every judge verdict is read. Constrained by the task's
answer schema (`json_schema = true`), llama.cpp writes only labels of the taxonomy.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest

from attunebench.data.jsonl import read_conversations
from attunebench.data.taxonomy import taxonomy_of
from attunebench.engine import read_records, read_run_info
from attunebench.models.llamacpp_server import LlamaServer
from attunebench.models.local_models import QWEN
from attunebench.models.modelsfile import models_file_text
from testkit.local_entry import local_entry

pytestmark = [pytest.mark.llm, pytest.mark.timeout(540)]

SAMPLE = Path(__file__).parents[2] / "src" / "attunebench" / "data" / "sample" / "sample.jsonl"


def attunebench_run(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from attunebench.cli import main; main()", "run", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=480)


def run_qwen(
    server: LlamaServer,
    tmp_path: Path,
    answer: Literal["generate", "choice"],
    *tasks: str,
    json_schema: bool = False,
) -> Path:
    name = f"{answer}-schema" if json_schema else answer
    models = tmp_path / f"models-{name}.toml"
    qwen = local_entry(
        QWEN,
        name="qwen",
        answer=answer,
        max_tokens=96,
        json_schema=json_schema,
        base_url=server.base_url,
    )
    toml = models_file_text([qwen])
    models.write_text(toml)
    out = tmp_path / f"run-{name}"
    args = ["--data", str(SAMPLE), "--models-file", str(models), "--model", "qwen"]
    args += ["--limit", "1", "--no-progress", "--out", str(out)]
    args += ["--cache", str(tmp_path / "cache.sqlite")]
    if "response" in tasks:
        args += ["--judge", "qwen"]
    for task in tasks:
        args += ["--task", task]
    done = attunebench_run(*args)
    log = server.log.read_text(errors="replace")[-2000:]
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\nserver log:\n{log}"
    return out


def test_qwen_answers_in_json_and_judges(qwen_server: LlamaServer, tmp_path: Path) -> None:
    out = run_qwen(qwen_server, tmp_path, "generate", "emotion", "preference", "response")
    info = read_run_info(out)
    assert info is not None and info.complete
    assert info.models[0].spec == f"openai/{QWEN.name}"
    records = read_records(out / "records.jsonl")
    assert {r.task for r in records} == {"emotion", "preference", "response"}
    answered = [r for r in records if r.task != "response"]
    assert sum(r.status == "ok" for r in answered) >= len(answered) / 2, [
        r.raw_output for r in answered if r.status != "ok"
    ]
    judged = [r for r in records if r.task == "response"]
    assert judged and all(r.status == "ok" for r in judged)  # every verdict was readable


def test_qwen_gives_choice_probabilities(qwen_server: LlamaServer, tmp_path: Path) -> None:
    out = run_qwen(qwen_server, tmp_path, "choice", "emotion", "preference")
    records = read_records(out / "records.jsonl")
    assert records and all(r.status == "ok" and r.mode == "choice" for r in records)
    assert all(r.distributions for r in records)


def test_a_constrained_emotion_answer_is_inside_the_taxonomy(
    qwen_server: LlamaServer, tmp_path: Path
) -> None:
    out = run_qwen(qwen_server, tmp_path, "generate", "emotion", json_schema=True)
    info = read_run_info(out)
    assert info is not None and info.models[0].json_schema  # run.json says so
    labels = {label.name for label in taxonomy_of(read_conversations(SAMPLE)[0]).emotions}
    records = read_records(out / "records.jsonl")
    assert records
    for record in records:
        # The raw answer, not the parser's normalised reading: the label exactly as listed.
        answer = json.loads(record.raw_output or "")
        assert answer["primary"] in labels, record.raw_output
        assert set(answer["emotions"]) <= labels, record.raw_output
        assert record.status == "ok", record.error
