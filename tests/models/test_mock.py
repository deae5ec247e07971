"""The scripted mock provider: outputs, latency, failures, counting, default answers."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from attunebench.answerform import FORMS, TaskHint
from attunebench.models import (
    GenerateParams,
    Message,
    MockProvider,
    ProviderError,
    SpecError,
    make_provider,
    parse_spec,
    spec_kind,
)
from attunebench.models.mock import word_count
from attunebench.tasks import load_tasks

PARAMS = GenerateParams()
MESSAGES = [Message("user", "I feel awful today")]


async def test_default_answers_every_hint_kind_with_valid_json() -> None:
    load_tasks()
    mock = make_provider("mock/default")

    async def ask(kind: str, **fields: Any) -> str:
        hint = TaskHint(kind, form=FORMS.get(kind), **fields)
        return (await mock.generate(MESSAGES, PARAMS, hint)).text

    assert json.loads(await ask("emotion", labels=("sad", "joy")))["primary"] == "sad"
    assert json.loads(await ask("behavior", labels=("validate",))) == {"behaviors": ["validate"]}
    assert json.loads(await ask("preference")) == {"choice": "A"}
    assert 1 <= json.loads(await ask("judge_rubric"))["score"] <= 10
    reply = await ask("response")
    assert reply and not reply.startswith("{")
    # A hint with no form asks for plain text.
    assert not (await mock.generate(MESSAGES, PARAMS, TaskHint("x"))).text.startswith("{")
    assert mock.spec == "mock/default"


async def test_scripted_outputs_cycle_callable_and_by_key() -> None:
    cycled = MockProvider(outputs=["a", "b"])
    texts = [(await cycled.generate(MESSAGES, PARAMS)).text for _ in range(3)]
    assert texts == ["a", "b", "a"]

    echo = MockProvider(outputs=lambda messages, hint: messages[-1].content.upper())
    assert (await echo.generate(MESSAGES, PARAMS)).text == "I FEEL AWFUL TODAY"

    keyed = MockProvider(outputs={"k1": "one"})
    hit = await keyed.generate(MESSAGES, PARAMS, TaskHint("preference", item_key="k1"))
    assert hit.text == "one"
    preference = TaskHint("preference", item_key="k2", form=FORMS.get("preference"))
    fallback = await keyed.generate(MESSAGES, PARAMS, preference)
    assert json.loads(fallback.text) == {"choice": "A"}


async def test_failures_in_call_order_and_per_item_attempt() -> None:
    busy = ProviderError("busy", retryable=True, status=429, retry_after_s=2.0)
    ordered = MockProvider(failures=[busy, None])
    with pytest.raises(ProviderError) as raised:
        await ordered.generate(MESSAGES, PARAMS)
    assert raised.value.status == 429 and raised.value.retry_after_s == 2.0
    assert (await ordered.generate(MESSAGES, PARAMS)).text
    assert ordered.calls == 2

    bad = ProviderError("bad request", retryable=False, status=400)
    per_item = MockProvider(failures={"x": [bad]})
    hint_x, hint_y = TaskHint("preference", item_key="x"), TaskHint("preference", item_key="y")
    assert (await per_item.generate(MESSAGES, PARAMS, hint_y)).text
    with pytest.raises(ProviderError):
        await per_item.generate(MESSAGES, PARAMS, hint_x)
    assert (await per_item.generate(MESSAGES, PARAMS, hint_x)).text
    assert per_item.calls_by_key == {"x": 2, "y": 1}


async def test_latency_is_scripted_and_in_flight_is_tracked() -> None:
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        await asyncio.sleep(0)

    mock = MockProvider(latency_s=[0.5, 1.5], sleep=fake_sleep)
    outputs = await asyncio.gather(*(mock.generate(MESSAGES, PARAMS) for _ in range(4)))
    assert slept == [0.5, 1.5, 0.5, 1.5]
    assert [o.latency_s for o in outputs] == [0.5, 1.5, 0.5, 1.5]
    assert mock.peak_in_flight == 4 and mock.in_flight == 0


async def test_call_log_records_successful_calls(tmp_path: Path) -> None:
    log = tmp_path / "calls.log"
    mock = MockProvider(call_log=log, failures=[ProviderError("x", retryable=True)])
    with pytest.raises(ProviderError):
        await mock.generate(MESSAGES, PARAMS, TaskHint("response", item_key="a"))
    await mock.generate(MESSAGES, PARAMS, TaskHint("response", item_key="a"))
    assert log.read_text().splitlines() == ["a"]


def test_specs_parse_and_unknown_prefixes_are_clear() -> None:
    assert parse_spec("openai/org/model") == ("openai", "org/model")
    assert spec_kind("mock/x") == "mock" and spec_kind("openai/gpt") == "model"
    with pytest.raises(SpecError, match="provider/model"):
        parse_spec("gpt-4o")
    with pytest.raises(SpecError, match="unknown provider 'nope'"):
        make_provider("nope/model")


async def test_tokens_are_whitespace_separated_words_as_str_split_counts_them() -> None:
    # Every character str.split() treats as a gap (ASCII controls \x1c-\x1f and non-ASCII
    # spaces among them) and some that it does not, mixed at random.
    alphabet = " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u2003ab{é"
    ascii_only = "".join(c for c in alphabet if c.isascii())
    rng = random.Random(0)
    texts = ["", " ", "w", " w ", "{" * 1000, "I feel " * 1000]
    for n in range(3000):
        chars = alphabet if n % 2 else ascii_only  # half of them ASCII only
        texts.append("".join(rng.choice(chars) for _ in range(rng.randint(0, 12))))
    assert [word_count(t) for t in texts] == [len(t.split()) for t in texts]
    wrong = "a\x1cb\x1fc\td"  # the trap: splitting only at the usual spaces gives 2
    output = await MockProvider("x", outputs=[wrong]).generate([Message("user", wrong)], PARAMS)
    assert (output.input_tokens, output.output_tokens) == (4, 4)
