"""Claude models as their provider describes them, against the Anthropic stand-in: its models
endpoint first and the table where it is gone; every request states its thinking, so a model
that thinks unasked (the Claude 5 families) never has its answer cut off; budgets that fit the
model's output limit and the account's output-token rate limit, checked before any item; and
calls paced by the rate-limit headers."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data.sample import sample_path
from attunebench.engine import RunConfig, RunResult, parse_shard, read_ledger, run
from attunebench.engine.runner import preflight
from attunebench.models import GenerateParams, Message, ProviderConfigError, ProviderError
from attunebench.models.anthropic import AnthropicProvider
from attunebench.models.modelsfile import ModelEntry
from testkit.records import diff_records, run_records
from testkit.servers import anthropic_rules
from testkit.servers.answers import answer_from_prompt
from testkit.servers.anthropic_stub import AnthropicStub

TIMEOUT = pytest.mark.timeout(180)
MESSAGES = [Message("system", "Answer in JSON."), Message("user", "I lost my job today.")]


@pytest.fixture
def stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as served:
        yield served


def set_on(stub: AnthropicStub, **values: Any) -> None:
    for name, value in values.items():
        stub.on_loop(lambda name=name, value=value: setattr(stub, name, value))


def engine_run(tmp_path: Path, entry: ModelEntry, name: str, limit: int = 2) -> RunResult:
    config = RunConfig(
        data=sample_path(),
        out=tmp_path / name,
        models=(entry,),
        tasks=("emotion",),
        limit=limit,
        cache_path=None,
        progress=False,
    )
    return asyncio.run(run(config))


def cli_run(tmp_path: Path, url: str, spec: str, params: str = "") -> tuple[int, str, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    models = tmp_path / "models.toml"
    entry = f'[models.claude]\nspec = "{spec}"\nbase_url = "{url}"\n'
    models.write_text(entry + (f"params = {{ {params} }}\n" if params else ""), "utf-8")
    out = tmp_path / "run"
    args = ["run", "--data", str(sample_path()), "--task", "emotion", "--limit", "5"]
    args += ["--models-file", str(models), "--model", "claude", "--no-cache", "--no-progress"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    return result.exit_code, result.output, out


@TIMEOUT
def test_sonnet_5_5_asked_no_thinking_sends_between_tools_and_barely_thinks(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    # The trap: left out, `thinking` is on for the Claude 5 families, and eats a task's budget;
    # and Sonnet 5.5 refuses `disabled` (it turns up-front thinking off with `between_tools`).
    omitted = {"model": "claude-sonnet-5-5", "max_tokens": 300, "messages": [MESSAGES[1].to_dict()]}
    headers = {"anthropic-version": "2023-06-01", "x-api-key": "k"}
    answer = httpx.post(f"{stub.base_url}/v1/messages", json=omitted, headers=headers).json()
    assert answer["usage"]["output_tokens_details"]["thinking_tokens"] > 0
    refused = httpx.post(
        f"{stub.base_url}/v1/messages",
        json={**omitted, "thinking": {"type": "disabled"}},
        headers=headers,
    )
    assert refused.status_code == 400
    refusals = stub.stats()["refused"]
    stub.bodies.clear()
    code, output, out = cli_run(tmp_path, stub.base_url, "anthropic/claude-sonnet-5-5")
    assert code == 0, output
    info = json.loads((out / "run.json").read_text("utf-8"))
    assert info["capabilities"]["claude"]["source"] == "endpoint"
    assert info["capabilities"]["claude"]["max_output_tokens"] == 128_000
    ledger = read_ledger(out)
    assert ledger is not None and sum(e.truncated for e in ledger.entries) == 0
    assert sum(e.calls for e in ledger.entries) >= 5 and stub.described["claude-sonnet-5-5"]
    assert stub.bodies and all(
        body["thinking"] == {"type": "between_tools"} for body in stub.bodies
    )
    thinking = sum(e.reasoning_tokens for e in ledger.entries)
    assert thinking < 0.10 * sum(e.output_tokens for e in ledger.entries)
    assert stub.stats()["refused"] == refusals  # none of the run's calls was refused
    lines = output.splitlines()
    [said] = [n for n, line in enumerate(lines) if line.startswith("capabilities: claude")]
    assert "from its models endpoint" in lines[said] and "(unasked: between_tools)" in lines[said]
    assert said < next(n for n, line in enumerate(lines) if "items recorded" in line)


@TIMEOUT
def test_opus_5_at_xhigh_effort_with_no_thinking_runs_with_no_refused_call(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    # Opus 5 turns thinking off only at effort high or lower: `disabled` at xhigh is a 400.
    code, output, _ = cli_run(
        tmp_path, stub.base_url, "anthropic/claude-opus-5", 'effort = "xhigh", max_tokens = 300'
    )
    assert code == 0, output
    assert stub.stats()["refused"] == 0 and stub.bodies
    assert all(
        body["thinking"] == {"type": "disabled"} and body["output_config"] == {"effort": "high"}
        for body in stub.bodies
    )
    [note] = [line for line in output.splitlines() if line.startswith("thinking: claude")]
    assert "'xhigh'" in note and "'high'" in note  # the effort lowered, said in one line
    set_on(stub, models_endpoint="gone")  # the table alone knows the same
    stub.bodies.clear()
    code, output, _ = cli_run(
        tmp_path / "t", stub.base_url, "anthropic/claude-opus-5", 'effort = "xhigh"'
    )
    assert code == 0 and stub.stats()["refused"] == 0, output


@TIMEOUT
def test_fable_5_asked_no_thinking_is_told_at_plan_time_that_it_always_thinks(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    code, output, out = cli_run(tmp_path, stub.base_url, "anthropic/claude-fable-5")
    assert code == 0, output
    lines = output.splitlines()
    [note] = [n for n, line in enumerate(lines) if line.startswith("thinking: claude")]
    assert "always thinks" in lines[note] and "16,000 tokens of thinking allowance" in lines[note]
    assert note < next(n for n, line in enumerate(lines) if "items recorded" in line)
    assert all(body["thinking"] == {"type": "adaptive"} for body in stub.bodies)
    assert stub.stats()["refused"] == 0
    ledger = read_ledger(out)
    assert ledger is not None and sum(e.truncated for e in ledger.entries) == 0


@TIMEOUT
@pytest.mark.parametrize("model", ["claude-3-5-haiku-20241022", "claude-3-7-sonnet-20250219"])
def test_a_retired_model_stops_the_run_from_the_endpoint_or_the_table(
    stub: AnthropicStub, tmp_path: Path, model: str
) -> None:
    code, output, _ = cli_run(tmp_path, stub.base_url, f"anthropic/{model}")
    assert code == 2 and "is retired (Anthropic's models endpoint)" in output
    set_on(stub, models_endpoint="gone")
    code, output, _ = cli_run(tmp_path / "t", stub.base_url, f"anthropic/{model}")
    assert code == 2 and "is retired (the table)" in output
    assert stub.stats()["live_calls"] == 0  # nothing was called


ACTIVE = sorted(m for m, rules in anthropic_rules.MODELS.items() if rules.lifecycle == "active")


@TIMEOUT
@pytest.mark.parametrize("model", ACTIVE)
def test_with_the_endpoint_gone_the_table_gives_the_same_records(
    stub: AnthropicStub, tmp_path: Path, model: str
) -> None:
    entry = ModelEntry(
        name="claude",
        spec=f"anthropic/{model}",
        base_url=stub.base_url,
        params=GenerateParams(max_tokens=300),
    )
    described = engine_run(tmp_path, entry, "described")
    set_on(stub, models_endpoint="gone")
    tabled = engine_run(tmp_path, entry, "tabled")
    for result in (described, tabled):
        assert result.complete and not result.truncated and not result.adapted
    assert stub.stats()["refused"] == 0 and all("thinking" in body for body in stub.bodies)
    sources = [
        json.loads((tmp_path / name / "run.json").read_text("utf-8"))["capabilities"]["claude"]
        for name in ("described", "tabled")
    ]
    assert [found["source"] for found in sources] == ["endpoint", "table"]
    assert sources[0]["thinking"] == sources[1]["thinking"]
    same = diff_records(run_records(tmp_path / "described"), run_records(tmp_path / "tabled"))
    assert same == []


@TIMEOUT
def test_a_changed_model_is_followed_and_an_unknown_one_may_think(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    always = replace(anthropic_rules.ALWAYS_THINKS, max_output=32_000)
    set_on(stub, models={**stub.models, "claude-sonnet-5-5": always, "claude-nova-6": always})
    url = stub.base_url
    changed = ModelEntry(name="claude", spec="anthropic/claude-sonnet-5-5", base_url=url)
    result = engine_run(tmp_path, changed, "changed")  # the endpoint says: it always thinks
    info = json.loads((tmp_path / "changed" / "run.json").read_text("utf-8"))
    assert info["capabilities"]["claude"]["thinking"] == ["adaptive"]
    assert result.complete and not result.truncated and not result.adapted
    set_on(stub, models_endpoint="gone")  # the table still says it can stop thinking
    result = engine_run(tmp_path, changed, "tabled")
    assert result.complete and not result.truncated
    assert result.adapted == {"claude": {"thinking": "disabled refused: adaptive stated"}}
    unknown = ModelEntry(name="claude", spec="anthropic/claude-nova-6", base_url=url)
    result = engine_run(tmp_path, unknown, "unknown")  # in no table, described by nothing
    assert result.complete and not result.truncated and not result.adapted
    assert stub.bodies[-1]["thinking"] == {"type": "adaptive"}
    assert stub.bodies[-1]["max_tokens"] > 16_000  # the answer's budget and an allowance


@TIMEOUT
async def test_the_allowance_and_timeout_scale_with_the_effort(stub: AnthropicStub) -> None:
    model = AnthropicProvider("claude-opus-5-5", base_url=stub.base_url, timeout_s=0.1)
    budgets = {
        effort: model.request(MESSAGES, GenerateParams(max_tokens=300, effort=effort))
        for effort in ("low", "medium", "high", "max")
    }
    assert [b["max_tokens"] for b in budgets.values()] == [4_300, 8_300, 16_300, 32_300]
    assert all(b["thinking"] == {"type": "adaptive"} for b in budgets.values())
    set_on(stub, latency_s=0.8)
    try:
        quick = AnthropicProvider("claude-sonnet-5-5", base_url=stub.base_url, timeout_s=0.1)
        with pytest.raises(ProviderError) as raised:  # 16 tokens: about half a second allowed
            await quick.generate(MESSAGES, GenerateParams(max_tokens=16))
        assert raised.value.retryable
        thinking = GenerateParams(max_tokens=16, thinking="adaptive", effort="low")
        assert (await quick.generate(MESSAGES, thinking)).text  # 4,016 tokens: nearly 2 minutes
    finally:
        set_on(stub, latency_s=0.0)
        await quick.aclose()
        await model.aclose()


@TIMEOUT
def test_a_call_over_the_output_token_rate_limit_stops_the_preflight(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    set_on(stub, output_tokens_per_minute=8_000)
    code, output, out = cli_run(
        tmp_path, stub.base_url, "anthropic/claude-sonnet-5-5", 'thinking = "adaptive"'
    )
    lines = [line for line in output.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, output
    assert "8,000 a minute" in lines[0] and "batch = true" in lines[0]
    assert not (out / "records.jsonl").exists()
    code, output, _ = cli_run(tmp_path / "fits", stub.base_url, "anthropic/claude-sonnet-5-5")
    assert code == 0, output  # no thinking: 16 calls of 512 tokens, paced under the limit
    assert any(line.startswith("rate limit: claude: 16 calls") for line in output.splitlines())


@TIMEOUT
async def test_calls_are_paced_by_the_rate_limit_headers(stub: AnthropicStub) -> None:
    set_on(stub, output_tokens_per_minute=6_000, latency_s=0.05)
    body = {"model": "claude-sonnet-5-5", "max_tokens": 1_500, "messages": [MESSAGES[1].to_dict()]}
    headers = {"anthropic-version": "2023-06-01", "x-api-key": "k"}
    async with httpx.AsyncClient(base_url=stub.base_url, headers=headers) as client:
        burst = [client.post("/v1/messages", json=body) for _ in range(12)]
        answers = await asyncio.gather(*burst)
    unpaced = stub.stats()["rate_limited"]
    assert unpaced >= 6 and all(a.status_code in (200, 429) for a in answers)
    await asyncio.sleep(1.5)  # what the burst took has refilled (100 tokens a second)
    model = AnthropicProvider("claude-sonnet-5-5", base_url=stub.base_url)
    await model.probe(GenerateParams(max_tokens=1_500))  # reads the limit from the headers
    started = time.monotonic()
    params = GenerateParams(max_tokens=1_500)
    outputs = await asyncio.gather(*(model.generate(MESSAGES, params) for _ in range(24)))
    await model.aclose()
    assert all(output.text for output in outputs)
    assert stub.stats()["rate_limited"] == unpaced  # not one 429 more
    assert model.rate_note(16) is not None and model.rate_note(2) is None
    assert time.monotonic() - started < 30


@TIMEOUT
async def test_the_preflight_checks_the_budget_against_the_output_limit(
    stub: AnthropicStub,
) -> None:
    model = AnthropicProvider("claude-sonnet-5-5", base_url=stub.base_url)
    with pytest.raises(ProviderConfigError, match=r"output limit of 128,000 tokens") as raised:
        await model.probe(GenerateParams(max_tokens=130_000))
    assert "\n" not in str(raised.value) and "models endpoint" in str(raised.value)
    assert all(body["max_tokens"] < 100 for body in stub.bodies)  # no long call was billed
    retired = replace(anthropic_rules.CLAUDE_5, lifecycle="retired")
    set_on(stub, models={**stub.models, "claude-sonnet-5-5": retired})
    with pytest.raises(ProviderConfigError, match="is retired"):
        await model.probe(GenerateParams())
    await model.aclose()


# Refusals worded as no code has seen: naming no field of the request, two of them, one (the
# only one a fix is given for), and over two lines.
NEVER_SEEN = [
    ("This combination of settings is not available for this model right now.", None),
    ('thinking.type "disabled" cannot go with output_config.effort "xhigh" here', None),
    ('output_config.effort: "xhigh" is not offered on this deployment', "output_config"),
    ("Request rejected by policy.\nSee your console.", None),
]


@TIMEOUT
@pytest.mark.parametrize(("said", "named"), NEVER_SEEN)
def test_a_refusal_never_seen_stops_the_run_with_its_message_verbatim(
    stub: AnthropicStub, tmp_path: Path, said: str, named: str | None
) -> None:
    set_on(stub, refuse_with=said)
    code, output, out = cli_run(
        tmp_path, stub.base_url, "anthropic/claude-opus-4-7", 'effort = "xhigh"'
    )
    assert code == 2
    [line] = [line for line in output.splitlines() if line.startswith("error:")]
    assert " ".join(said.splitlines()) in line  # verbatim, on one line
    assert line.startswith("error: [models.claude] anthropic/claude-opus-4-7 ")
    assert 'sent: model="claude-opus-4-7", max_tokens=' in line
    assert 'output_config={"effort": "xhigh"}' in line and 'thinking={"type": "disabled"}' in line
    if named is None:
        assert "fix" not in line and "refused the pre-flight call (HTTP 400)" in line
    else:
        assert f"refuses the parameter '{named}'" in line and "fix its models-file entry" in line
    assert not (out / "records.jsonl").exists()


@TIMEOUT
def test_the_preflight_runs_once_per_run_and_model_not_per_shard(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    entry = ModelEntry(
        name="claude",
        spec="anthropic/claude-opus-5",
        base_url=stub.base_url,
        params=GenerateParams(max_tokens=300, effort="xhigh"),
    )
    config = RunConfig(
        data=sample_path(),
        out=tmp_path / "driver",
        models=(entry,),
        tasks=("emotion",),
        limit=4,
        cache_path=None,
        progress=False,
    )
    found = asyncio.run(preflight(config))  # the driver's, once
    assert stub.stats()["preflight"] == 1 and stub.described["claude-opus-5"] == 1
    assert json.loads(json.dumps(found)) == found  # plain JSON: it travels to any process
    for index in (1, 2):
        shard = replace(config, out=tmp_path / f"shard{index}", shard=parse_shard(f"{index}/2"))
        result = asyncio.run(run(replace(shard, preflight=found)))
        assert result.complete
    assert stub.stats()["preflight"] == 1 and stub.described["claude-opus-5"] == 1
    assert stub.stats()["refused"] == 0


@TIMEOUT
async def test_a_call_that_may_pass_ten_minutes_is_streamed_with_the_same_answer(
    stub: AnthropicStub,
) -> None:
    model = AnthropicProvider("claude-opus-4-7", base_url=stub.base_url)
    long = GenerateParams(max_tokens=300, thinking="adaptive", effort="max")  # 32,300 tokens
    short = GenerateParams(max_tokens=300, thinking="adaptive", effort="high")  # 16,300
    streamed = await model.generate(MESSAGES, long)
    plain = await model.generate(MESSAGES, short)
    await model.aclose()
    assert [body.get("stream") for body in stub.bodies] == [True, None]
    assert [body["max_tokens"] for body in stub.bodies] == [32_300, 16_300]
    expected = anthropic_rules.reply(stub.bodies[0], answer_from_prompt)  # as unstreamed
    assert streamed.text == expected["content"][-1]["text"] == plain.text
    assert streamed.thinking and streamed.reasoning_tokens == 4096
    assert streamed.output_tokens == expected["usage"]["output_tokens"]
    assert streamed.input_tokens == expected["usage"]["input_tokens"]
