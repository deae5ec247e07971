"""Reasoning models and provider-specific parameters, against the local stand-ins for OpenAI's
and Anthropic's APIs: the parameters each model takes, the pre-flight call that stops a run
the server would refuse (with its fix in one line), reasoning tokens and thinking text kept
and priced, and `params.extra` passed through and into the cache key."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data.sample import sample_path
from attunebench.engine import RunConfig, cache_key, read_ledger, read_records, run
from attunebench.models import GenerateParams, Message, ProviderConfigError, ProviderError
from attunebench.models.anthropic import AnthropicProvider
from attunebench.models.modelsfile import ModelEntry, Price, load_models_file
from attunebench.models.openai_compat import OpenAICompatProvider
from attunebench.records import PromptInfo
from testkit.servers.anthropic_stub import AnthropicStub
from testkit.servers.openai_stub import OpenAIStub

MESSAGES = [Message("system", "Answer in JSON."), Message("user", "I lost my job today.")]
TIMEOUT = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def openai_stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as stub:
        yield stub


@pytest.fixture(scope="module")
def anthropic_stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as stub:
        yield stub


def provider(url: str, model: str, **options: Any) -> OpenAICompatProvider:
    return OpenAICompatProvider(model, base_url=url, **options)


def test_each_model_gets_the_parameters_its_capabilities_say() -> None:
    local = "http://127.0.0.1:1/v1"
    params = GenerateParams(temperature=0.0, max_tokens=900, top_p=0.9)
    reasoning = provider(local, "gpt-5-mini-2025-08-07").request_body(MESSAGES, params)
    assert reasoning["max_completion_tokens"] == 900 and "max_tokens" not in reasoning
    assert "temperature" not in reasoning and "top_p" not in reasoning  # the table's entry
    official = provider(local, "o3", api="openai").request_body(MESSAGES, params)
    assert official["max_completion_tokens"] == 900 and "max_tokens" not in official
    chat = provider(local, "gpt-5-chat-latest", api="openai").request_body(MESSAGES, params)
    assert chat["temperature"] == 0.0 and chat["top_p"] == 0.9  # not a reasoning model
    forced = provider(local, "gpt-5", sampling=True).request_body(MESSAGES, params)
    assert forced["temperature"] == 0.0  # the setting outranks the table
    served = provider(local, "my-finetune").request_body(MESSAGES, params)  # a vLLM model
    assert served["max_tokens"] == 900 and served["temperature"] == 0.0
    told = provider(local, "o3", capabilities={"token_field": "max_tokens", "sampling": True})
    assert told.request_body(MESSAGES, params)["max_tokens"] == 900
    with pytest.raises(ProviderConfigError, match=r"capabilities\.logprobs"):
        provider(local, "o3", capabilities={"logprobs": "perhaps"})


def test_the_api_follows_the_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert OpenAICompatProvider("gpt-5").api == "openai"  # api.openai.com by default
    assert provider("https://openrouter.ai/api/v1", "openai/gpt-5").api == "compatible"
    routed = provider("https://openrouter.ai/api/v1", "openai/o4-mini")
    assert not routed.capabilities.sampling  # a router's model name still finds the table
    unknown = OpenAICompatProvider("gpt-9-preview")  # not in the table, on OpenAI's API
    assert not unknown.capabilities.sampling and not unknown.capabilities.logprobs


def test_reasoning_effort_and_extra_go_in_the_body() -> None:
    params = GenerateParams(reasoning_effort="low", extra={"verbosity": "low", "service_tier": 1})
    body = provider("http://127.0.0.1:1/v1", "gpt-5", api="openai").request_body(MESSAGES, params)
    assert body["reasoning_effort"] == "low"
    assert body["verbosity"] == "low" and body["service_tier"] == 1
    override = GenerateParams(max_tokens=5, extra={"max_completion_tokens": 7})
    body = provider("http://127.0.0.1:1/v1", "o3", api="openai").request_body(MESSAGES, override)
    assert body["max_completion_tokens"] == 7  # extra has the last word


def test_a_thinking_budget_is_refused_by_openai_models() -> None:
    with pytest.raises(ProviderError, match="thinking_budget is for anthropic/") as raised:
        provider("http://127.0.0.1:1/v1", "o3").request_body(
            MESSAGES, GenerateParams(thinking_budget=2048)
        )
    assert raised.value.permanent
    for claude in ({"thinking": "adaptive"}, {"effort": "low"}):
        with pytest.raises(ProviderError, match=f"{next(iter(claude))} is for anthropic/"):
            provider("http://127.0.0.1:1/v1", "o3").request_body(
                MESSAGES, GenerateParams.model_validate(claude)
            )


@TIMEOUT
async def test_reasoning_tokens_are_read_and_priced(openai_stub: OpenAIStub) -> None:
    model = provider(f"{openai_stub.base_url}/v1", "o4-mini", api="openai")
    output = await model.generate(
        MESSAGES, GenerateParams(max_tokens=2000, reasoning_effort="high")
    )
    await model.aclose()
    assert output.text and output.reasoning_tokens == 480  # the stub's tokens for "high"
    assert output.output_tokens > output.reasoning_tokens
    answer = output.output_tokens - output.reasoning_tokens
    price = Price(input=1.1, output=4.4, reasoning=2.0)
    expected = (output.input_tokens * 1.1 + answer * 4.4 + 480 * 2.0) / 1e6
    assert price.cost(output.input_tokens, output.output_tokens, 480) == pytest.approx(expected)
    plain = Price(input=1.1, output=4.4)  # reasoning billed as output, as OpenAI bills it
    cost = plain.cost(output.input_tokens, output.output_tokens, 480)
    assert cost == pytest.approx((output.input_tokens * 1.1 + output.output_tokens * 4.4) / 1e6)
    assert plain.cost(10, 20, batched=True) == pytest.approx(plain.cost(10, 20) / 2)


@TIMEOUT
async def test_a_small_budget_leaves_a_reasoning_model_no_answer(openai_stub: OpenAIStub) -> None:
    model = provider(f"{openai_stub.base_url}/v1", "o3", api="openai")
    output = await model.generate(MESSAGES, GenerateParams(max_tokens=100))  # medium: 160
    await model.aclose()
    assert output.text == "" and output.finish_reason == "length"


def models_file(tmp_path: Path, url: str, entry: str) -> Path:
    path = tmp_path / "models.toml"
    path.write_text(f'[models.subject]\nbase_url = "{url}"\n{entry}\n', encoding="utf-8")
    return path


def cli_run(tmp_path: Path, models: Path) -> tuple[int, str]:
    args = [
        "run",
        "--data",
        str(sample_path()),
        "--task",
        "emotion",
        "--limit",
        "2",
        "--no-progress",
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "--models-file",
        str(models),
        "--model",
        "subject",
        "--out",
        str(tmp_path / "run"),
    ]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


@TIMEOUT
@pytest.mark.parametrize(
    ("entry", "said"),
    [
        (
            'spec = "openai/gpt-5"\nparams = { extra = { temperature = 0.5 } }',
            ["'temperature'", "remove temperature from params.extra"],
        ),
        (
            'spec = "openai/gpt-4.1"\napi = "openai"\nparams = { reasoning_effort = "low" }',
            ["'reasoning_effort'", "remove reasoning_effort from params"],
        ),
        (
            'spec = "openai/gpt-5-mini"\napi = "openai"\nparams = { extra = { thinking = 1 } }',
            ["'thinking'", "remove thinking from params.extra"],
        ),
        (
            'spec = "openai/gpt-7"\napi = "openai"',
            ["refused the pre-flight call (HTTP 404)", "does not exist"],
        ),
    ],
)
def test_a_refusal_it_cannot_adapt_stops_the_run_at_preflight_with_its_fix(
    openai_stub: OpenAIStub, tmp_path: Path, entry: str, said: list[str]
) -> None:
    before = openai_stub.stats()
    code, output = cli_run(tmp_path, models_file(tmp_path, f"{openai_stub.base_url}/v1", entry))
    after = openai_stub.stats()
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in output, output
    assert lines[0].startswith("error: [models.subject] openai/")
    assert all(part in lines[0] for part in said), lines[0]
    assert after["live_calls"] == before["live_calls"]
    assert not (tmp_path / "run").exists()  # stopped before anything was planned


@TIMEOUT
def test_a_reasoning_model_run_completes_with_its_tokens_priced(
    openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    entry = (
        'spec = "openai/gpt-5-mini"\napi = "openai"\n'
        "price = { input = 0.25, output = 2.0, reasoning = 1.0 }\n"
        'params = { max_tokens = 4000, reasoning_effort = "low" }'
    )
    code, output = cli_run(tmp_path, models_file(tmp_path, f"{openai_stub.base_url}/v1", entry))
    assert code == 0, output
    records = read_records(tmp_path / "run" / "records.jsonl")
    assert records and all(r.status == "ok" for r in records)
    assert all(r.reasoning_tokens == 48 and r.output_tokens > 48 for r in records)
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None
    [entry_] = ledger.entries
    assert entry_.reasoning_tokens == 48 * entry_.calls
    answer = entry_.output_tokens - entry_.reasoning_tokens
    expected = (entry_.input_tokens * 0.25 + answer * 2.0 + entry_.reasoning_tokens * 1.0) / 1e6
    assert entry_.cost_usd == pytest.approx(expected)
    assert sum(r.cost_usd for r in records) == pytest.approx(expected)


def test_extra_enters_the_cache_key_and_unset_fields_keep_old_keys() -> None:
    def key(params: GenerateParams) -> str:
        return cache_key(
            identity={"spec": "openai/x"},
            messages=MESSAGES,
            params=params,
            prompt=PromptInfo(id="p", version="1"),
            item_key="i",
            hint=None,
        )

    plain = GenerateParams(max_tokens=64)
    old_recipe = {"temperature", "max_tokens", "top_p", "seed", "stop", "json_mode"}
    assert set(plain.key_fields()) == old_recipe  # the fields every existing key was made of
    assert key(plain.model_copy(update={"extra": {"verbosity": "low"}})) != key(plain)
    assert key(plain.model_copy(update={"reasoning_effort": "low"})) != key(plain)
    assert key(plain.model_copy(update={"thinking_budget": 2048})) != key(plain)
    assert key(plain.model_copy(update={"extra": {}})) == key(plain)


def test_models_file_settings_fit_their_providers(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text(
        '[models.a]\nspec = "openai/o3"\napi = "openai"\nsampling = false\nbatch = true\n'
        'params = { reasoning_effort = "high", extra = { verbosity = "low" } }\n'
        '[models.b]\nspec = "anthropic/claude-sonnet-4-5"\nparams = { thinking_budget = 4096 }\n',
        encoding="utf-8",
    )
    entries = load_models_file(path)
    assert entries["a"].provider_options() == {"api": "openai", "sampling": False, "batch": True}
    assert entries["a"].params.extra == {"verbosity": "low"}
    assert entries["b"].params.thinking_budget == 4096
    assert (
        entries["a"].cache_identity()
        != entries["a"].model_copy(update={"sampling": None}).cache_identity()
    )  # leaving temperature out can change the answers
    assert (
        entries["a"].cache_identity()
        == entries["a"].model_copy(update={"batch": False, "api": "compatible"}).cache_identity()
    )  # a batch answer is the live answer
    for bad, message in [
        ('spec = "mock/x"\nbatch = true', "batch is a setting of anthropic/ and openai/"),
        ('spec = "anthropic/x"\napi = "openai"', "api is a setting of openai/"),
        ('spec = "anthropic/x"\nparams = { thinking_budget = 100 }', "greater than or equal"),
    ]:
        path.write_text(f"[models.c]\n{bad}\n", encoding="utf-8")
        with pytest.raises(ValueError, match=message):
            load_models_file(path)


@TIMEOUT
async def test_thinking_is_kept_apart_from_the_answer(anthropic_stub: AnthropicStub) -> None:
    model = AnthropicProvider("claude-sonnet-4-5", base_url=anthropic_stub.base_url)
    params = GenerateParams(temperature=0.0, max_tokens=300, thinking_budget=2048)
    body = model.request(MESSAGES, params)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 2348 and "temperature" not in body  # the API's rules
    output = await model.generate(MESSAGES, params)
    plain = await model.generate(MESSAGES, params.model_copy(update={"thinking_budget": None}))
    await model.aclose()
    assert output.thinking and output.thinking not in output.text
    assert output.text == plain.text and plain.thinking is None
    assert output.output_tokens > plain.output_tokens  # thinking is billed as output


@TIMEOUT
async def test_anthropic_preflight_adapts_or_names_the_refused_parameter(
    anthropic_stub: AnthropicStub,
) -> None:
    model = AnthropicProvider("claude-haiku-4-5", base_url=anthropic_stub.base_url)
    await model.probe(GenerateParams(top_p=0.9))  # refused with a temperature: top_p dropped
    assert model.adapted == {"top_p": "dropped"}
    assert "top_p" not in model.request(MESSAGES, GenerateParams(top_p=0.9))
    thinking = GenerateParams(thinking_budget=2048, extra={"temperature": 0.5})
    with pytest.raises(ProviderConfigError, match=r"remove temperature from params\.extra"):
        await model.probe(thinking)
    with pytest.raises(ProviderConfigError, match="reasoning_effort is for OpenAI"):
        await model.probe(GenerateParams(reasoning_effort="low"))
    await model.probe(GenerateParams(thinking_budget=2048))  # accepted: no error
    await model.aclose()


@TIMEOUT
def test_a_run_with_thinking_keeps_it_in_the_records(
    anthropic_stub: AnthropicStub, tmp_path: Path
) -> None:
    entry = ModelEntry(
        name="claude",
        spec="anthropic/claude-sonnet-4-5",
        base_url=anthropic_stub.base_url,
        price=Price(input=3.0, output=15.0),
        params=GenerateParams(max_tokens=500, thinking_budget=1024),
    )
    config = RunConfig(
        data=sample_path(),
        out=tmp_path / "run",
        models=(entry,),
        tasks=("emotion",),
        limit=2,
        cache_path=tmp_path / "cache.sqlite",
        progress=False,
    )
    result = asyncio.run(run(config))
    assert result.complete
    records = read_records(tmp_path / "run" / "records.jsonl")
    for record in records:
        assert record.thinking and record.raw_output
        assert all(text not in record.raw_output for text in record.thinking.values())
        assert record.cost_usd == pytest.approx(
            (record.input_tokens * 3.0 + record.output_tokens * 15.0) / 1e6
        )
