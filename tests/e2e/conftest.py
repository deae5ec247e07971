"""The real local LLM: Gemma 3 270M behind llama.cpp's OpenAI-compatible server, per module."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from attunebench.models.llamacpp_server import LlamaServer, gemma_gguf


def require_llama_cpp() -> None:
    """Skip without llama-cpp-python, except under CI, where its absence is a failure."""
    if importlib.util.find_spec("llama_cpp") is None:
        message = "llama-cpp-python is not installed (make install-llm)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{message}, and CI requires the end-to-end LLM test")
        pytest.skip(message)


@pytest.fixture(scope="module")
def gemma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    require_llama_cpp()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(gemma_gguf(), log=log) as server:
        yield server
