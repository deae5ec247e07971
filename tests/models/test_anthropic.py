"""The anthropic provider: the real SDK against a local stand-in for the Messages API."""

from __future__ import annotations

import tomllib
from collections.abc import AsyncIterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from packaging.requirements import Requirement

from attunebench.models import GenerateParams, Message, ProviderConfigError, ProviderError
from attunebench.models.anthropic import AnthropicProvider

MESSAGES = [Message("system", "Be warm."), Message("user", "My dog died.")]


def reply(text: str) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-stub",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 3},
    }


@pytest.fixture
async def server() -> AsyncIterator[tuple[list[Any], list[web.Response], str]]:
    seen: list[Any] = []
    script: list[web.Response] = []

    async def messages(request: web.Request) -> web.Response:
        seen.append({**await request.json(), "version": request.headers["anthropic-version"]})
        return script.pop(0) if script else web.json_response(reply("I'm so sorry."))

    app = web.Application()
    app.router.add_post("/v1/messages", messages)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    yield seen, script, f"http://127.0.0.1:{test_server.port}"
    await test_server.close()


async def test_messages_request_and_reply(
    server: tuple[list[Any], list[web.Response], str],
) -> None:
    seen, _, url = server
    provider = AnthropicProvider("claude-haiku-4-5", base_url=url)
    output = await provider.generate(MESSAGES, GenerateParams(max_tokens=20, stop=("END",)))
    await provider.aclose()
    assert seen[0]["version"] == "2023-06-01"  # the version the provider was written for
    assert seen[0]["system"] == "Be warm."
    assert seen[0]["messages"] == [{"role": "user", "content": "My dog died."}]
    assert seen[0]["stop_sequences"] == ["END"] and seen[0]["max_tokens"] == 20
    assert seen[0]["temperature"] == 0.0 and "top_p" not in seen[0]
    assert output.text == "I'm so sorry." and output.finish_reason == "end_turn"
    assert (output.input_tokens, output.output_tokens) == (12, 3)


@pytest.mark.parametrize(("status", "retryable"), [(429, True), (529, True), (400, False)])
async def test_status_errors_map_with_retry_after(
    server: tuple[list[Any], list[web.Response], str], status: int, retryable: bool
) -> None:
    _, script, url = server
    body = {"type": "error", "error": {"type": "x", "message": "no"}}
    script.append(web.json_response(body, status=status, headers={"retry-after": "4"}))
    provider = AnthropicProvider("claude-stub", base_url=url)
    with pytest.raises(ProviderError) as raised:
        await provider.generate(MESSAGES, GenerateParams())
    await provider.aclose()
    assert (raised.value.status, raised.value.retryable) == (status, retryable)
    assert raised.value.retry_after_s == 4.0


async def test_unreachable_is_retryable() -> None:
    provider = AnthropicProvider("claude-stub", base_url="http://127.0.0.1:9", timeout_s=5)
    with pytest.raises(ProviderError) as raised:
        await provider.generate(MESSAGES, GenerateParams())
    await provider.aclose()
    assert raised.value.retryable and raised.value.status is None


def test_the_real_api_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderConfigError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicProvider("claude-sonnet-4")


def test_the_installed_sdk_is_in_the_range_the_code_is_tested_against() -> None:
    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text("utf-8"))["project"]["optional-dependencies"]
    [pinned] = [Requirement(r) for r in extras["anthropic"] if r.startswith("anthropic")]
    assert pinned.specifier.contains(version("anthropic")), (pinned, version("anthropic"))
    assert "<" in str(pinned.specifier)  # an upper bound: a new major is tested before use
