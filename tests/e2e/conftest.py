"""The real local LLMs (Gemma 3 270M, Qwen2.5-Coder 0.5B Instruct) behind llama.cpp's
OpenAI-compatible server: one server per model for the whole session (Gemma's serves three
modules; each start loads the model again). The tests ask one server at a time, so it reads
prompts with every core (reading prompts is most of these tests' time); it generates with one."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from attunebench.models.llamacpp_server import LlamaServer, cpp_server
from attunebench.models.local_models import GEMMA, QWEN

CORES = os.cpu_count() or 1


def require_llama_server() -> None:
    """Skip without llama.cpp's `llama-server`, except under CI, where its absence is a failure."""
    if cpp_server() is None:
        message = "no llama-server binary (make llama-server)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message}, and CI requires the end-to-end LLM test")
        pytest.skip(message)


@pytest.fixture(scope="session")
def gemma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    require_llama_server()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(GEMMA.path(), log=log, threads_batch=CORES) as server:
        yield server


@pytest.fixture(scope="session")
def qwen_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    require_llama_server()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(QWEN.path(), log=log, alias=QWEN.alias, threads_batch=CORES) as server:
        yield server
