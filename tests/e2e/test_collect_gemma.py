"""A real model behind the collection app: a study whose pool puts `openai/gemma-3-270m` at the
llama.cpp server, checked by `collect init`, served, and taken by one simulated participant
for two turns; the export holds Gemma's replies."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.collect.app import create_app
from attunebench.collect.settings import Settings
from attunebench.collect.simulate import simulate
from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.models.llamacpp_server import LlamaServer
from attunebench.models.local_models import GEMMA

pytestmark = [pytest.mark.llm, pytest.mark.timeout(600)]

STUDY = """
id = "gemma-dry-run"
name = "Gemma dry run"
consent = "You agree to chat."
instructions = "Write what is on your mind."
researcher_contact = "dry-run@example.org"
[[models]]
spec = "openai/{alias}"
options = {{ base_url = "{base_url}", json_mode = false, timeout_s = 300 }}
[[models]]
spec = "mock/steady"
[generation]
system_prompt = "You are a supportive listener. Reply in one or two short sentences."
max_tokens = 32
timeout_s = 300
[turns]
min = 2
max = 2
[end]
final_state = false
[enrolment]
open = true
cap = 5
simulated = true
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_simulated_participant_talks_to_gemma(gemma_server: LlamaServer, tmp_path: Path) -> None:
    study = tmp_path / "study.toml"
    study.write_text(STUDY.format(alias=GEMMA.name, base_url=gemma_server.base_url))
    db = f"sqlite:///{tmp_path / 'study.db'}"
    port = _free_port()
    runner = CliRunner()
    base = f"http://127.0.0.1:{port}"
    done = runner.invoke(
        app, ["collect", "init", "--study", str(study), "--db", db, "--base-url", base]
    )
    assert done.exit_code == 0, done.output  # init reached the server
    join = done.output.split("open link: ")[1].split()[0]

    config = uvicorn.Config(
        create_app(Settings(database_url=db)),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the app did not start"
        time.sleep(0.05)
    try:
        messages = [[t.user for t in c.turns] for c in read_conversations(sample_path())]
        outcome = asyncio.run(simulate(join, 1, seed=0, conversations=messages))
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    assert (outcome.enrolled, outcome.finished, outcome.turns) == (1, 1, 2), outcome.problems

    out = tmp_path / "export.jsonl"
    exported = runner.invoke(app, ["collect", "export", "--db", db, "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    (record,) = read_conversations(out)
    assert record.source.kind == "simulated" and len(record.turns) == 2
    gemma = [r for t in record.turns for r in t.responses if r.model == f"openai/{GEMMA.name}"]
    assert len(gemma) == 2 and all(r.text.strip() for r in gemma)
    assert json.loads(out.read_text())["turns"][0]["continued_by"] in ("pick", "random")
