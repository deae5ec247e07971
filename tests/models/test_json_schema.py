"""Constrained decoding, opt-in per model (`json_schema = true`): the provider sends the task's
answer schema only when the entry asks, the pre-flight refuses to drop it, and the setting
enters the cache identity, run.json and the report."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from attunebench.analysis.loading import Run, provider_notices
from attunebench.answerform import FORMS, TaskHint
from attunebench.engine.runner import _model_info
from attunebench.models import GenerateParams, Message, ProviderConfigError
from attunebench.models.modelsfile import ModelEntry, ModelsFileError, load_models_file
from attunebench.models.openai_compat import OpenAICompatProvider
from attunebench.models.openai_wire import PROBE_SCHEMA
from attunebench.records import ModelInfo, RunInfo
from attunebench.tasks import load_tasks

MESSAGES = [Message("user", "I failed my exam.")]
JSON = GenerateParams(json_mode=True)


def emotion_hint() -> TaskHint:
    load_tasks()
    return TaskHint("emotion", labels=("sad", "joy"), form=FORMS.get("emotion"))


class Server:
    """Answers every chat call with `{"ok": true}`, or one asking for a response format with
    the scripted refusal; keeps the bodies."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.refuse: dict[str, Any] | None = None  # an error body, answered with HTTP 400

    async def chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        if self.refuse is not None and "response_format" in body:
            return web.json_response({"error": self.refuse}, status=400)
        message = {"role": "assistant", "content": '{"ok": true}'}
        return web.json_response({"choices": [{"message": message, "finish_reason": "stop"}]})


@pytest.fixture
async def server() -> AsyncIterator[tuple[Server, str]]:
    state = Server()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", state.chat)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    yield state, f"http://127.0.0.1:{test_server.port}/v1"
    await test_server.close()


async def test_the_schema_is_sent_only_when_the_model_asks(server: tuple[Server, str]) -> None:
    state, url = server
    hint = emotion_hint()
    free = OpenAICompatProvider("m", base_url=url)
    constrained = OpenAICompatProvider("m", base_url=url, json_schema=True)
    for provider in (free, constrained):
        await provider.generate(MESSAGES, JSON, hint)
        await provider.aclose()
    assert state.bodies[0]["response_format"] == {"type": "json_object"}
    sent = state.bodies[1]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is False
    assert sent["json_schema"]["schema"] == FORMS.get("emotion").schema(hint)
    assert sent["json_schema"]["schema"]["properties"]["primary"]["enum"] == ["sad", "joy"]


async def test_plain_text_and_choice_calls_carry_no_schema(server: tuple[Server, str]) -> None:
    state, url = server
    provider = OpenAICompatProvider("m", base_url=url, json_schema=True)
    reply = TaskHint("response", text="hi", form=FORMS.get("response"))
    await provider.generate(MESSAGES, GenerateParams(), reply)
    await provider.generate(MESSAGES, GenerateParams(), None)
    await provider.aclose()
    assert all("response_format" not in body for body in state.bodies)
    choice = provider.request_body(MESSAGES, JSON, choice=True)
    assert "response_format" not in choice


async def test_a_server_refusing_the_schema_stops_the_run(server: tuple[Server, str]) -> None:
    state, url = server
    state.refuse = {"message": "json_schema not supported", "param": "response_format"}
    provider = OpenAICompatProvider("m", base_url=url, json_schema=True)
    with pytest.raises(ProviderConfigError, match="set json_schema = false"):
        await provider.probe(GenerateParams())
    await provider.aclose()
    assert state.bodies[0]["response_format"]["json_schema"]["schema"] == PROBE_SCHEMA
    assert provider.adapted == {}  # not dropped: the run would not be what run.json says
    # A free model's JSON mode, refused the same way, is still adapted away.
    free = OpenAICompatProvider("m", base_url=url)
    await free.probe(GenerateParams())
    await free.aclose()
    assert free.adapted.get("response_format") == "dropped"


def test_a_completions_model_cannot_be_constrained() -> None:
    with pytest.raises(ProviderConfigError, match="needs chat completions"):
        OpenAICompatProvider("m", base_url="http://127.0.0.1:1/v1", chat=False, json_schema=True)


def test_the_setting_is_part_of_the_cache_identity(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text(
        '[models.free]\nspec = "openai/m"\n[models.tied]\nspec = "openai/m"\njson_schema = true\n'
    )
    entries = load_models_file(path)
    assert entries["tied"].provider_options()["json_schema"] is True
    assert entries["tied"].cache_identity() == {
        **entries["free"].cache_identity(),
        "json_schema": True,
    }
    assert "json_schema" not in entries["free"].cache_identity()  # older keys still found
    path.write_text('[models.x]\nspec = "mock/default"\njson_schema = true\n')
    with pytest.raises(
        ModelsFileError, match="json_schema is a setting of local/ and openai/ models"
    ):
        load_models_file(path)


def test_run_json_and_the_report_say_the_answers_were_constrained(tmp_path: Path) -> None:
    entry = ModelEntry(name="qwen", spec="openai/m", json_schema=True)
    info = RunInfo(
        package_version="0",
        dataset="d.jsonl",
        dataset_sha256="0" * 64,
        tasks=["emotion"],
        models=[_model_info(entry, "subject", "model"), ModelInfo(spec="openai/free")],
        seed=0,
        started_at="2026-12-03T00:00:00+00:00",
    )
    assert info.models[0].json_schema and not info.models[1].json_schema
    notices = provider_notices([Run(tmp_path, info, None)])
    assert [(n.kind, n.model) for n in notices] == [("constrained", "qwen")]
    assert "schema-constrained" in notices[0].message
