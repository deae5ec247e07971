"""The OpenAI-compatible provider read as a stream (the collection app's streamed replies),
against a local server that writes server-sent events a piece at a time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from attunebench.models import GenerateParams, Message, ProviderError
from attunebench.models.openai_compat import OpenAICompatProvider

PIECES = ["That ", "sounds ", "hard. ", "", "What happened?"]


async def _chat(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    if not body.get("stream"):
        return web.json_response({"error": {"message": "stream expected"}}, status=400)
    if body["messages"][-1]["content"] == "fail":
        return web.json_response({"error": {"message": "overloaded"}}, status=503)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(b": a comment the client skips\n\n")
    for piece in PIECES:
        chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
        await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await asyncio.sleep(0.01)
    await response.write(
        b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    )
    await response.write(b"data: [DONE]\n\n")
    return response


@pytest.fixture
async def server() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", _chat)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    yield f"http://127.0.0.1:{test_server.port}/v1"
    await test_server.close()


async def test_the_reply_comes_piece_by_piece(server: str) -> None:
    provider = OpenAICompatProvider("stub", base_url=server, api_key_env="NO_KEY_NEEDED")
    params = GenerateParams(max_tokens=40)
    try:
        pieces = [p async for p in provider.stream([Message("user", "Hi")], params)]
        assert pieces == [p for p in PIECES if p]
        with pytest.raises(ProviderError, match="overloaded") as caught:
            _ = [p async for p in provider.stream([Message("user", "fail")], params)]
        assert caught.value.status == 503
    finally:
        await provider.aclose()
