"""The real local LLMs (Gemma 3 270M, Qwen2.5-Coder 0.5B Instruct) behind llama.cpp's
OpenAI-compatible server: one server per model for the whole session (Gemma's serves three
modules; each start loads the model again); a `local/` model's run starts its own instead. The
tests ask one server at a time; on an otherwise idle machine it reads prompts with every core
(reading prompts is most of these tests' time), and generates with one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from attunebench.models.llamacpp_server import LlamaServer, cpp_server
from attunebench.models.local_models import GEMMA, QWEN


def prompt_threads() -> int | None:
    """Every core for reading prompts when nothing but this test run keeps the machine busy
    (the 1-minute load, this run's included, under the cores less one half), else the
    server's default. On 2 idle cores Qwen 0.5B read a 540-token prompt at 189 tokens/s on 2
    threads against 95 on one; while other jobs kept the load at 2, its JSON-and-judge test
    read its 6,431 prompt tokens at 74 tokens/s on 2 threads against 93 on one."""
    cores = os.cpu_count() or 1
    return cores if os.getloadavg()[0] < cores - 0.5 else None


def require_llama_server() -> None:
    """Skip without llama.cpp's `llama-server`, except under CI, where its absence is a failure."""
    if cpp_server() is None:
        message = "no llama-server binary (make llama-server)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message}, and CI requires the end-to-end LLM test")
        pytest.skip(message)


@pytest.fixture
def llama_server_binary() -> Path | None:
    """llama.cpp's `llama-server`, for a test whose run starts its own (a `local/` model)."""
    require_llama_server()
    return cpp_server()


@pytest.fixture(scope="session")
def gemma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    require_llama_server()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(GEMMA.path(), log=log, threads_batch=prompt_threads()) as server:
        yield server


@pytest.fixture(scope="session")
def qwen_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    require_llama_server()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(
        QWEN.path(), log=log, alias=QWEN.name, threads_batch=prompt_threads()
    ) as server:
        yield server
