"""Every provider feature against the strict stand-ins for OpenAI's and Anthropic's APIs, whose
model tables are their own (`testing.openai_rules`, `testing.anthropic_stub`), not the
providers' capability table: whole runs with default models-file entries for older and newer
reasoning families, a chat model, Claude with and without adaptive thinking; what the
pre-flight adapts and what stops it; quota and permission errors; retry-after-ms; cached
input; answers cut off by thinking; batches kept under an enqueued-token budget."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attunebench.analysis.loading import load_runs
from attunebench.cli import app
from attunebench.data.sample import sample_path
from attunebench.engine import RunConfig, RunResult, read_records, run
from attunebench.models import GenerateParams, Message, ProviderConfigError, ProviderError
from attunebench.models.anthropic import AnthropicProvider
from attunebench.models.modelsfile import ModelEntry, Price
from attunebench.models.openai_compat import OpenAICompatProvider
from attunebench.tasks.base import PlanError
from testkit.servers import openai_rules
from testkit.servers.anthropic_stub import AnthropicStub
from testkit.servers.openai_stub import OpenAIStub

TIMEOUT = pytest.mark.timeout(180)
MESSAGES = [Message("system", "Answer in JSON."), Message("user", "I lost my job today.")]


@pytest.fixture(scope="module")
def openai_stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(models={"gpt-6": openai_rules.GPT5}) as stub:  # a family the table lacks
        yield stub


@pytest.fixture(scope="module")
def claude_stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as stub:
        yield stub


def engine_run(tmp_path: Path, entry: ModelEntry, name: str = "run", **options: Any) -> RunResult:
    config = RunConfig(
        data=sample_path(),
        out=tmp_path / name,
        models=(entry,),
        tasks=options.pop("tasks", ("emotion",)),
        limit=options.pop("limit", 2),
        cache_path=None,
        progress=False,
        **options,
    )
    return asyncio.run(run(config))


def entry(spec: str, url: str, **fields: Any) -> ModelEntry:
    return ModelEntry.model_validate({"name": "subject", "spec": spec, "base_url": url, **fields})


@TIMEOUT
@pytest.mark.parametrize(
    ("spec", "answer", "chooses"),
    [
        ("openai/o3", "generate", False),  # an older reasoning family
        ("openai/o3", "choice", False),  # no first-token logprobs: choice does not apply
        ("openai/gpt-5.5", "generate", False),  # a newer one, effort "none" by default
        ("openai/gpt-5.5", "choice", True),  # at effort "none" it gives logprobs
        ("openai/gpt-4.1", "generate", False),  # a chat model
        ("openai/gpt-4.1", "choice", True),
    ],
)
def test_openai_families_run_end_to_end_with_default_entries(
    openai_stub: OpenAIStub, tmp_path: Path, spec: str, answer: str, chooses: bool
) -> None:
    before = openai_stub.stats()
    subject = entry(spec, f"{openai_stub.base_url}/v1", answer=answer)
    if answer == "choice" and not chooses:  # nothing applies: the plan is refused, saying why
        with pytest.raises(PlanError, match=r"nothing to run: .*first-token logprobs"):
            engine_run(tmp_path, subject)
        assert openai_stub.stats()["refused"] == before["refused"]
        assert not (tmp_path / "run").exists()
        return
    result = engine_run(tmp_path, subject)
    after = openai_stub.stats()
    assert result.complete and not result.adapted and result.planned > 0
    assert after["refused"] == before["refused"]  # the stand-in refused nothing
    records = read_records(tmp_path / "run" / "records.jsonl")
    assert all(r.status != "failed" for r in records)
    choice_records = [r for r in records if r.distributions]
    assert bool(choice_records) == chooses


@TIMEOUT
@pytest.mark.parametrize(
    ("spec", "params", "thinks"),
    [
        ("anthropic/claude-sonnet-4-5", {}, False),  # takes a temperature, no adaptive thinking
        ("anthropic/claude-sonnet-4-5", {"thinking_budget": 1024}, True),
        ("anthropic/claude-opus-4-7", {}, False),  # refuses sampling: none is sent
        ("anthropic/claude-opus-4-7", {"thinking": "adaptive", "effort": "low"}, True),
        ("anthropic/claude-opus-5-5", {}, True),  # thinks unasked: its budget covers it
    ],
)
def test_claude_runs_end_to_end_with_and_without_adaptive_thinking(
    claude_stub: AnthropicStub, tmp_path: Path, spec: str, params: dict[str, Any], thinks: bool
) -> None:
    before = claude_stub.stats()
    model = entry(spec, claude_stub.base_url, params={"max_tokens": 300, **params})
    result = engine_run(tmp_path, model)
    assert result.complete and not result.adapted and not result.truncated
    assert claude_stub.stats()["refused"] == before["refused"]
    records = read_records(tmp_path / "run" / "records.jsonl")
    assert records and all(r.status == "ok" for r in records)
    assert all(bool(r.thinking) == thinks for r in records)
    assert all((r.reasoning_tokens > 0) == thinks for r in records)  # thinking_tokens read
    assert set(claude_stub.versions) == {"2023-06-01"}


@TIMEOUT
def test_the_preflight_adapts_what_the_table_did_not_predict(
    openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    models = tmp_path / "models.toml"
    url = f"{openai_stub.base_url}/v1"
    models.write_text(f'[models.next]\nspec = "openai/gpt-6"\nbase_url = "{url}"\n', "utf-8")
    args = ["run", "--data", str(sample_path()), "--task", "emotion", "--limit", "2"]
    args += ["--no-progress", "--no-cache", "--models-file", str(models), "--model", "next"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    expected = {"max_tokens": "renamed to max_completion_tokens", "temperature": "dropped"}
    info = json.loads((tmp_path / "run" / "run.json").read_text("utf-8"))
    assert info["adapted"] == {"next": expected}
    [line] = [x for x in result.output.splitlines() if x.startswith("adapted:")]
    assert "max_tokens renamed to max_completion_tokens; temperature dropped" in line
    [notice] = [n for n in load_runs([tmp_path / "run"]).notices if n.kind == "adapted"]
    assert notice.model == "next" and "temperature dropped" in notice.message


def test_one_body_builder_serves_generate_and_choice() -> None:
    model = OpenAICompatProvider("Qwen3-8B", base_url="http://127.0.0.1:1/v1")
    params = GenerateParams(
        seed=7,
        reasoning_effort="low",
        json_mode=True,
        extra={"chat_template_kwargs": {"enable_thinking": False}},
    )
    generate = model.request_body(MESSAGES, params)
    choice = model.request_body(MESSAGES, params, choice=True)
    for body in (generate, choice):
        assert body["seed"] == 7 and body["reasoning_effort"] == "low"
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert choice["max_tokens"] == 1 and choice["logprobs"] and choice["top_logprobs"] == 20
    assert "response_format" not in choice and generate["max_tokens"] == 512
    official = OpenAICompatProvider("gpt-4.1", base_url="http://127.0.0.1:1/v1", api="openai")
    assert official.request_body(MESSAGES, params, choice=True)["max_completion_tokens"] == 1
    with pytest.raises(ProviderConfigError, match="only by OpenAI's Responses API"):
        OpenAICompatProvider("gpt-5.5-pro", base_url="http://127.0.0.1:1/v1")


@TIMEOUT
async def test_the_preflight_probes_the_choice_body_too(openai_stub: OpenAIStub) -> None:
    url = f"{openai_stub.base_url}/v1"
    told = OpenAICompatProvider("o3", base_url=url, capabilities={"logprobs": True})
    with pytest.raises(ProviderConfigError, match=r"'logprobs'.*answer = \"generate\""):
        await told.probe(GenerateParams(), choice=True)  # generate passes, choice is refused
    await told.probe(GenerateParams())  # generate alone is fine
    await told.aclose()


@TIMEOUT
@pytest.mark.parametrize("deny", ["quota", "forbidden"])
async def test_an_unfunded_or_forbidden_account_stops_the_preflight(
    openai_stub: OpenAIStub, deny: str
) -> None:
    model = OpenAICompatProvider("gpt-4.1", base_url=f"{openai_stub.base_url}/v1")
    openai_stub.on_loop(lambda: setattr(openai_stub, "deny", deny))
    try:
        with pytest.raises(ProviderConfigError) as raised:
            await model.probe(GenerateParams())
        with pytest.raises(ProviderError) as call:
            await model.generate(MESSAGES, GenerateParams())
    finally:
        openai_stub.on_loop(lambda: setattr(openai_stub, "deny", None))
        await model.aclose()
    status = 429 if deny == "quota" else 403
    assert f"HTTP {status}" in str(raised.value) and "\n" not in str(raised.value)
    assert call.value.permanent and not call.value.retryable  # no retry burns on it
    assert call.value.code == ("insufficient_quota" if deny == "quota" else "model_not_found")


@TIMEOUT
async def test_claude_billing_error_is_permanent(claude_stub: AnthropicStub) -> None:
    model = AnthropicProvider("claude-haiku-4-5", base_url=claude_stub.base_url)
    claude_stub.on_loop(lambda: setattr(claude_stub, "deny", "billing"))
    try:
        with pytest.raises(ProviderConfigError, match="credit balance is too low"):
            await model.probe(GenerateParams())
    finally:
        claude_stub.on_loop(lambda: setattr(claude_stub, "deny", None))
        await model.aclose()


@TIMEOUT
async def test_retry_after_ms_is_honoured(openai_stub: OpenAIStub) -> None:
    model = OpenAICompatProvider("gpt-4.1", base_url=f"{openai_stub.base_url}/v1")
    openai_stub.on_loop(lambda: setattr(openai_stub, "rate_limited", 1))
    with pytest.raises(ProviderError) as raised:
        await model.generate(MESSAGES, GenerateParams())
    output = await model.generate(MESSAGES, GenerateParams())
    await model.aclose()
    assert raised.value.retryable and raised.value.retry_after_s == pytest.approx(0.02)
    assert output.text  # the next call goes through


@TIMEOUT
async def test_cached_input_is_counted_and_priced(openai_stub: OpenAIStub) -> None:
    model = OpenAICompatProvider("gpt-4.1", base_url=f"{openai_stub.base_url}/v1")
    long = [Message("system", "Answer in JSON. " + "Context. " * 900), MESSAGES[1]]
    output = await model.generate(long, GenerateParams())
    short = await model.generate(MESSAGES, GenerateParams())
    await model.aclose()
    assert output.cached_input_tokens == 1920 and short.cached_input_tokens == 0
    price = Price(input=2.0, cached_input=0.5)
    fresh = output.input_tokens - output.cached_input_tokens
    cost = price.cost(output.input_tokens, 0, cached_input_tokens=output.cached_input_tokens)
    assert cost == pytest.approx((fresh * 2.0 + 1920 * 0.5) / 1e6)
    assert Price(input=2.0).cost(output.input_tokens, 0, cached_input_tokens=1920) == (
        pytest.approx(output.input_tokens * 2.0 / 1e6)
    )  # no cached price given: the input price, as before


@TIMEOUT
def test_answers_cut_off_by_thinking_are_counted_per_model(
    claude_stub: AnthropicStub, tmp_path: Path
) -> None:
    always = entry(
        "anthropic/claude-opus-5-5",
        claude_stub.base_url,
        params={"max_tokens": 300, "effort": "high"},
        capabilities={"thinking_allowance": 0},  # the task's budget alone: thinking eats it
    )
    result = engine_run(tmp_path, always)
    records = read_records(tmp_path / "run" / "records.jsonl")
    assert result.truncated == {"subject": len(records)} and records
    assert all(r.status == "invalid" for r in records)
    [notice] = [n for n in load_runs([tmp_path / "run"]).notices if n.kind == "truncated"]
    assert notice.model == "subject" and notice.message.startswith(f"{len(records)} answers")


@TIMEOUT
def test_batches_stay_under_the_enqueued_token_budget(tmp_path: Path) -> None:
    fast = {"batch_poll_s": 0.02, "batch_quiet_s": 0.1}
    with OpenAIStub() as stub:
        stub.on_loop(lambda: setattr(stub, "enqueued_token_limit", 6000))
        url = f"{stub.base_url}/v1"
        kept = entry("openai/gpt-4.1", url, batch=True, options={**fast, "batch_tokens": 6000})
        result = engine_run(tmp_path, kept, limit=6)
        split = stub.stats()["batches"]
        over = entry("openai/gpt-4.1", url, batch=True, options={**fast, "batch_tokens": 10**9})
        failed = engine_run(tmp_path, over, name="over", limit=6)
    assert result.complete and split > 1  # split into several batches, none refused
    assert not failed.complete
    assert any("token_limit_exceeded" in e or "Enqueued token" in e for *_, e in failed.errors)


@TIMEOUT
async def test_the_api_version_decides_sampling(claude_stub: AnthropicStub) -> None:
    url = claude_stub.base_url
    newer = AnthropicProvider("claude-haiku-4-5", base_url=url, api_version="2026-10-21")
    assert "temperature" not in newer.request(MESSAGES, GenerateParams())
    assert (await newer.generate(MESSAGES, GenerateParams())).text
    forced = AnthropicProvider(
        "claude-haiku-4-5", base_url=url, api_version="2026-10-21", sampling=True
    )
    await forced.probe(GenerateParams())  # the stand-in reads the header and refuses it
    assert forced.adapted == {"temperature": "dropped"}
    older = AnthropicProvider("claude-haiku-4-5", base_url=url)
    assert older.request(MESSAGES, GenerateParams())["temperature"] == 0.0
    for model in (newer, forced, older):
        await model.aclose()
    assert claude_stub.versions["2026-10-21"] >= 2
