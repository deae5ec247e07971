"""The OpenAI-compatible provider against a scripted local server (127.0.0.1, free port)."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from attunebench.models import (
    GenerateParams,
    Message,
    MockProvider,
    ProviderConfigError,
    ProviderError,
)
from attunebench.models.openai_compat import OpenAICompatProvider

Handler = Callable[[web.Request], Any]
MESSAGES = [Message("system", "Be kind."), Message("user", "I failed my exam.")]


def completion(text: str, prompt_tokens: int = 11, completion_tokens: int = 4) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "model": "stub",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


class Stub:
    """A server whose next responses are scripted; it records every request it gets."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.script: list[web.Response] = []

    async def chat(self, request: web.Request) -> web.Response:
        self.requests.append((dict(request.headers), await request.json()))
        if self.script:
            return self.script.pop(0)
        return web.json_response(completion("ok"))

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "stub"}]})


@pytest.fixture
async def stub() -> AsyncIterator[tuple[Stub, str]]:
    state = Stub()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", state.chat)
    app.router.add_get("/v1/models", state.models)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    yield state, f"http://127.0.0.1:{server.port}/v1"
    await server.close()


async def test_request_shape_key_and_usage(
    stub: tuple[Stub, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state, url = stub
    monkeypatch.setenv("STUB_KEY", "sk-test")
    state.script.append(web.json_response(completion('{"choice": "B"}', 20, 5)))
    provider = OpenAICompatProvider("gemma", base_url=url, api_key_env="STUB_KEY")
    params = GenerateParams(temperature=0.2, max_tokens=32, seed=7, stop=("\n\n",), json_mode=True)
    output = await provider.generate(MESSAGES, params)
    await provider.aclose()
    headers, body = state.requests[0]
    assert headers["Authorization"] == "Bearer sk-test"
    assert body["model"] == "gemma" and body["max_tokens"] == 32 and body["seed"] == 7
    assert body["messages"][0] == {"role": "system", "content": "Be kind."}
    assert body["stop"] == ["\n\n"] and body["response_format"] == {"type": "json_object"}
    assert output.text == '{"choice": "B"}' and output.finish_reason == "stop"
    assert (output.input_tokens, output.output_tokens) == (20, 5)
    assert output.latency_s > 0


async def test_json_mode_is_left_out_where_the_server_lacks_it(stub: tuple[Stub, str]) -> None:
    state, url = stub
    provider = OpenAICompatProvider("m", base_url=url, json_mode=False)
    await provider.generate(MESSAGES, GenerateParams(json_mode=True))
    await provider.aclose()
    headers, body = state.requests[0]
    assert "response_format" not in body and "Authorization" not in headers


@pytest.mark.parametrize(
    ("response", "retryable", "status", "retry_after"),
    [
        (web.Response(status=429, text="slow down", headers={"Retry-After": "3"}), True, 429, 3.0),
        (web.Response(status=503, text="overloaded"), True, 503, None),
        (web.Response(status=400, text="bad request"), False, 400, None),
        (web.Response(status=401, text="no key"), False, 401, None),
        (web.Response(status=404, text="no such path"), False, 404, None),
        (web.Response(status=408, text="request timeout"), True, 408, None),
        (web.Response(status=409, text="conflict"), True, 409, None),
        (web.Response(status=200, text="not json"), True, None, None),
        (web.json_response({"choices": []}), True, None, None),
    ],
)
async def test_errors_map_to_provider_errors(
    stub: tuple[Stub, str],
    response: web.Response,
    retryable: bool,
    status: int | None,
    retry_after: float | None,
) -> None:
    state, url = stub
    state.script.append(response)
    provider = OpenAICompatProvider("m", base_url=url)
    with pytest.raises(ProviderError) as raised:
        await provider.generate(MESSAGES, GenerateParams())
    await provider.aclose()
    assert raised.value.retryable is retryable
    assert raised.value.status == status
    assert raised.value.retry_after_s == retry_after


async def test_replicas_are_used_round_robin(stub: tuple[Stub, str]) -> None:
    state, url = stub
    other = Stub()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", other.chat)
    second = TestServer(app, host="127.0.0.1")
    await second.start_server()
    provider = OpenAICompatProvider("m", base_urls=[url, f"http://127.0.0.1:{second.port}/v1"])
    for _ in range(4):
        await provider.generate(MESSAGES, GenerateParams())
    await provider.aclose()
    await second.close()
    assert len(state.requests) == 2 and len(other.requests) == 2
    assert provider.endpoint.count("http://") == 2


async def test_unreachable_server_is_retryable_and_check_says_so() -> None:
    provider = OpenAICompatProvider("m", base_url="http://127.0.0.1:9/v1", timeout_s=5)
    with pytest.raises(ProviderError) as raised:
        await provider.generate(MESSAGES, GenerateParams())
    assert raised.value.retryable
    with pytest.raises(ProviderConfigError, match=r"cannot reach http://127\.0\.0\.1:9/v1"):
        await provider.check()
    await provider.aclose()


async def test_check_passes_on_a_live_server(stub: tuple[Stub, str]) -> None:
    provider = OpenAICompatProvider("m", base_url=stub[1])
    await provider.check()
    await provider.aclose()


async def test_check_fails_on_a_base_url_without_the_api_path(stub: tuple[Stub, str]) -> None:
    base = stub[1].removesuffix("/v1")  # the host answers, but 404 on /models
    provider = OpenAICompatProvider("m", base_url=base)
    with pytest.raises(ProviderConfigError) as raised:
        await provider.check()
    await provider.aclose()
    message = str(raised.value)
    assert f"{base}/models" in message and "HTTP 404" in message and "/v1" in message
    assert "\n" not in message


def test_a_remote_server_needs_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderConfigError, match="OPENAI_API_KEY is not set"):
        OpenAICompatProvider("gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1/")
    assert OpenAICompatProvider("local").base_urls == ["http://localhost:8000/v1"]


def test_request_body_is_plain_json() -> None:
    provider = OpenAICompatProvider("m", base_url="http://127.0.0.1:1/v1")
    body = provider.request_body(MESSAGES, GenerateParams())
    assert json.loads(json.dumps(body)) == body and "top_p" not in body


async def test_choose_reads_the_keys_probabilities_and_times_the_call(
    stub: tuple[Stub, str],
) -> None:
    state, url = stub
    top = [("B", 0.6), ("A", 0.2), ("x", 0.2)]  # "x" is no key: renormalised over A and B
    logprobs = [{"token": t, "logprob": math.log(p)} for t, p in top]
    reply = completion("B", 9, 1)
    reply["choices"][0]["logprobs"] = {
        "content": [{"token": "B", "logprob": math.log(0.6), "top_logprobs": logprobs}]
    }
    state.script.append(web.json_response(reply))
    provider = OpenAICompatProvider("gemma", base_url=url, api_key="k")
    output = await provider.choose(MESSAGES, ["A", "B"], GenerateParams(max_tokens=1))
    await provider.aclose()
    assert output.probabilities == pytest.approx({"A": 0.25, "B": 0.75})
    assert output.input_tokens == 9 and output.latency_s > 0
    assert state.requests[0][1]["logprobs"] is True


async def test_a_provider_without_choice_mode_refuses_to_choose() -> None:
    with pytest.raises(ProviderError, match="cannot answer in choice mode"):
        await MockProvider("default").choose(MESSAGES, ["A", "B"], GenerateParams())


async def test_a_key_written_after_its_parenthesis_again_counts_as_the_key(
    stub: tuple[Stub, str],
) -> None:
    # Chat models asked "Answer: (" in the user's turn often open their own with "(B": that is
    # the key B, not a token outside the options (which would leave B its floor).
    state, url = stub
    top = [("(B", 0.6), ("(", 0.2), ("A", 0.1), ("The", 0.1)]
    logprobs = [{"token": t, "logprob": math.log(p)} for t, p in top]
    reply = completion("(B", 9, 1)
    reply["choices"][0]["logprobs"] = {
        "content": [{"token": "(B", "logprob": math.log(0.6), "top_logprobs": logprobs}]
    }
    state.script.append(web.json_response(reply))
    provider = OpenAICompatProvider("qwen", base_url=url, api_key="k")
    output = await provider.choose(MESSAGES, ["A", "B"], GenerateParams(max_tokens=1))
    await provider.aclose()
    assert output.probabilities == pytest.approx({"A": 0.1 / 0.7, "B": 0.6 / 0.7})
    assert output.floored == ()


async def test_a_server_that_continues_the_answer_is_asked_in_the_models_own_turn(
    stub: tuple[Stub, str],
) -> None:
    state, url = stub
    for _ in range(2):
        reply = completion("B", 9, 1)
        reply["choices"][0]["logprobs"] = {
            "content": [{"token": "B", "logprob": 0.0, "top_logprobs": []}]
        }
        state.script.append(web.json_response(reply))
    asked = [Message("user", "Which did they prefer?\n(A) one\n(B) two\nAnswer: (")]
    plain = OpenAICompatProvider("qwen", base_url=url, api_key="k")
    await plain.choose(asked, ["A", "B"], GenerateParams(max_tokens=1))
    await plain.aclose()
    prefilling = OpenAICompatProvider("qwen", base_url=url, api_key="k")
    prefilling.choice_prefill = True
    await prefilling.choose(asked, ["A", "B"], GenerateParams(max_tokens=1))
    await prefilling.aclose()
    assert state.requests[0][1]["messages"] == [m.to_dict() for m in asked]
    assert state.requests[1][1]["messages"] == [
        {"role": "user", "content": "Which did they prefer?\n(A) one\n(B) two"},
        {"role": "assistant", "content": "Answer: ("},
    ]
