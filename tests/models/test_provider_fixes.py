"""What an audit of the providers against their documents found, each against the stand-ins:
cache writes read and priced (Anthropic's five-minute and one-hour writes, GPT-5.6's), no
renaming of Anthropic's required `max_tokens`, 408 and 409 retried, enqueued-token budgets per
model and split between entries batching one model, and the request fields OpenAI accepts
passed through."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from attunebench.data.jsonl import write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.validate import load_validated
from attunebench.engine import RetryPolicy, RunConfig, RunResult, read_ledger, run
from attunebench.models import GenerateParams, Message, ProviderConfigError
from attunebench.models.anthropic import AnthropicProvider
from attunebench.models.modelsfile import ModelEntry, Price
from attunebench.models.openai_batch import ENQUEUED_TOKENS, enqueued_tokens
from attunebench.models.openai_compat import OpenAICompatProvider
from testkit.servers.anthropic_rules import MODELS
from testkit.servers.anthropic_stub import AnthropicStub
from testkit.servers.openai_stub import OpenAIStub

TIMEOUT = pytest.mark.timeout(180)
FILLER = " Some context." * 400
LONG = [Message("system", "Answer in JSON." + FILLER * 3), Message("user", "I lost it.")]
FAST = {"batch_poll_s": 0.02, "batch_quiet_s": 0.1}


@pytest.fixture(scope="module")
def openai_stub() -> Iterator[OpenAIStub]:
    with OpenAIStub() as stub:
        yield stub


@pytest.fixture(scope="module")
def claude_stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as stub:
        yield stub


def engine_run(
    tmp_path: Path, *entries: ModelEntry, name: str = "run", **options: Any
) -> RunResult:
    config = RunConfig(
        data=options.pop("data", sample_path()),
        out=tmp_path / name,
        models=entries,
        tasks=("emotion",),
        limit=options.pop("limit", 2),
        cache_path=None,
        progress=False,
        **options,
    )
    return asyncio.run(run(config, policy=RetryPolicy(base_delay_s=0.01)))


@TIMEOUT
@pytest.mark.parametrize(("ttl", "multiple"), [("5m", 1.25), ("1h", 2.0)])
async def test_anthropic_cache_writes_are_read_and_priced(
    claude_stub: AnthropicStub, ttl: str, multiple: float
) -> None:
    model = AnthropicProvider("claude-sonnet-4-6", base_url=claude_stub.base_url)
    unique = [Message("system", f"{ttl}: {LONG[0].content}"), LONG[1]]
    params = GenerateParams(extra={"cache_control": {"type": "ephemeral", "ttl": ttl}})
    first = await model.generate([*unique, Message("user", "first")], params)
    second = await model.generate([*unique, Message("user", "second")], params)
    await model.aclose()
    written = first.cache_write_tokens
    assert written > 1_024 and first.cached_input_tokens == 0
    assert first.cache_write_1h_tokens == (written if ttl == "1h" else 0)
    assert second.cached_input_tokens == written and second.cache_write_tokens == 0
    price = Price(input=3.0, cached_input=0.3, output=15.0)
    fresh = first.input_tokens - written
    expected = (fresh * 3.0 + written * 3.0 * multiple + first.output_tokens * 15.0) / 1e6
    assert price.cost(
        first.input_tokens,
        first.output_tokens,
        cache_write_tokens=written,
        cache_write_1h_tokens=first.cache_write_1h_tokens,
    ) == pytest.approx(expected)


def long_sample(path: Path) -> Path:
    """The sample's first conversations, each message lengthened past the prompt cache's
    1,024 tokens."""
    kept = load_validated(sample_path())[:2]
    longer = [
        c.model_copy(
            update={"turns": tuple(t.model_copy(update={"user": t.user + FILLER}) for t in c.turns)}
        )
        for c in kept
    ]
    write_conversations(path, longer)
    return path


@TIMEOUT
def test_gpt56_cache_writes_are_read_counted_and_priced(
    openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    url = f"{openai_stub.base_url}/v1"
    price = {"input": 2.0, "cached_input": 0.2, "output": 10.0}
    entry = ModelEntry.model_validate(
        {"name": "gpt", "spec": "openai/gpt-5.6", "base_url": url, "price": price}
    )
    data = long_sample(tmp_path / "long.jsonl")
    first = engine_run(tmp_path, entry, name="first", data=data)
    again = engine_run(tmp_path, entry, name="again", data=data)  # read now, not written
    ledgers = [read_ledger(tmp_path / name) for name in ("first", "again")]
    assert ledgers[0] is not None and ledgers[1] is not None
    written = sum(e.cache_write_tokens for e in ledgers[0].entries)
    read = sum(e.cached_input_tokens for e in ledgers[1].entries)
    assert written > 0 and read == written
    assert sum(e.cache_write_tokens for e in ledgers[1].entries) == 0
    assert sum(e.cached_input_tokens for e in ledgers[0].entries) == 0
    # A write costs 1.25 times the input price, a read the cached price: same tokens, other cost.
    extra = first.totals.cost_usd - again.totals.cost_usd
    assert extra == pytest.approx(written * (2.0 * 1.25 - 0.2) / 1e6)


@TIMEOUT
async def test_anthropic_max_tokens_is_never_renamed(claude_stub: AnthropicStub) -> None:
    # A refusal that names max_tokens, with the output limit unknown to the provider: the
    # Messages API has no max_completion_tokens to rename it to.
    smaller = replace(claude_stub.models["claude-sonnet-5-5"], max_output=16_000)
    models = {**claude_stub.models, "claude-sonnet-5-5": smaller}
    claude_stub.on_loop(lambda: setattr(claude_stub, "models", models))
    claude_stub.on_loop(lambda: setattr(claude_stub, "models_endpoint", "gone"))
    model = AnthropicProvider("claude-sonnet-5-5", base_url=claude_stub.base_url)
    try:
        with pytest.raises(ProviderConfigError) as raised:  # 16 + 16,000 for thinking
            await model.probe(GenerateParams(thinking="adaptive"))
    finally:
        claude_stub.on_loop(lambda: setattr(claude_stub, "models_endpoint", "served"))
        claude_stub.on_loop(lambda: setattr(claude_stub, "models", dict(MODELS)))
        await model.aclose()
    said = str(raised.value)
    assert "refuses the parameter 'max_tokens'" in said and "lower params.max_tokens" in said
    assert model.adapted == {}  # not renamed to max_completion_tokens


@TIMEOUT
def test_408_and_409_are_retried_by_both_providers(
    openai_stub: OpenAIStub, claude_stub: AnthropicStub, tmp_path: Path
) -> None:
    claude = ModelEntry(
        name="claude", spec="anthropic/claude-haiku-4-5", base_url=claude_stub.base_url
    )
    gpt = ModelEntry(name="gpt", spec="openai/gpt-4.1", base_url=f"{openai_stub.base_url}/v1")
    for stub, entry in ((claude_stub, claude), (openai_stub, gpt)):
        before = stub.stats()["failed_on_demand"]
        stub.on_loop(lambda stub=stub: setattr(stub, "fail_next", [408, 409]))
        result = engine_run(tmp_path, entry, name=entry.name, limit=1, check_servers=False)
        assert result.complete and result.failed == 0
        assert result.totals.retries == 2 and stub.stats()["failed_on_demand"] == before + 2


def test_enqueued_token_budgets_are_per_model() -> None:
    assert enqueued_tokens("gpt-4o") == 90_000 and enqueued_tokens("gpt-5-mini") == 5_000_000
    assert enqueued_tokens("gpt-4.1-2025-04-14") == 900_000
    assert enqueued_tokens("gpt-7") == min(ENQUEUED_TOKENS.values())  # unknown: the lowest
    url = "http://127.0.0.1:1/v1"
    told = OpenAICompatProvider("gpt-4o", base_url=url, batch=True, batch_tokens=50_000)
    default = OpenAICompatProvider("gpt-4o", base_url=url, batch=True)
    assert (told.batch_budget(), default.batch_budget()) == (50_000, 90_000)


@TIMEOUT
def test_entries_batching_one_model_split_its_budget(
    openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    url = f"{openai_stub.base_url}/v1"
    openai_stub.on_loop(lambda: setattr(openai_stub, "enqueued_token_limit", 12_000))
    options = {**FAST, "batch_tokens": 12_000}  # the model's limit, for the two entries
    subject, judge = (
        ModelEntry.model_validate(
            {
                "name": name,
                "spec": "openai/gpt-4.1",
                "base_url": url,
                "batch": True,
                "options": options,
            }
        )
        for name in ("subject", "other")
    )
    said: list[str] = []
    config = RunConfig(
        data=sample_path(),
        out=tmp_path / "split",
        models=(subject, judge),
        tasks=("emotion",),
        limit=6,
        cache_path=None,
        progress=False,
    )
    try:
        result = asyncio.run(run(config, say=said.append))
    finally:
        openai_stub.on_loop(lambda: setattr(openai_stub, "enqueued_token_limit", None))
    assert result.complete, result.errors  # together under the limit: no batch refused
    split = [line for line in said if line.startswith("batch: ")]
    assert split == [
        f"batch: {name}: up to 6,000 input tokens enqueued at once, its share of 2 entries "
        "batching this model"
        for name in ("subject", "other")
    ]


@TIMEOUT
def test_request_fields_openai_accepts_pass_through(
    openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    extra = {
        "prompt_cache_retention": "24h",
        "prompt_cache_options": {"key": "attunebench"},
        "web_search_options": {},
    }
    entry = ModelEntry.model_validate(
        {
            "name": "gpt",
            "spec": "openai/gpt-5.5",
            "base_url": f"{openai_stub.base_url}/v1",
            "params": {"extra": extra},
        }
    )
    openai_stub.bodies.clear()
    result = engine_run(tmp_path, entry)
    assert result.complete and not result.adapted
    assert openai_stub.bodies and all(
        {name: body[name] for name in extra} == extra for body in openai_stub.bodies
    )
