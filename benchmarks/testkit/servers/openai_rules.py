"""OpenAI's chat-completion rules, as the stand-in server applies them: which models exist, which
requests each refuses (with the API's error bodies) and how an accepted one is answered
(reasoning tokens, logprobs, the prompt cache).

The table `MODELS` is this module's own, written from OpenAI's model and reasoning guides and
the openai SDK's types (each model's sources in `SOURCES`, with the day read) and importing
nothing from the provider's capability table, so the two can disagree and a test can tell.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from attunebench.models.batching import request_key
from attunebench.models.capabilities import Citation
from testkit.servers.served import Answerer, tokens

EFFORT_TOKENS = {"none": 0, "minimal": 8, "low": 48, "medium": 160, "high": 480, "xhigh": 960}
CHOICE_TOKENS = tuple("ABCDEFGHIJ") + tuple("123456789") + (" ",)
KNOWN = frozenset(
    [
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "seed",
        "stop",
        "response_format",
        "reasoning_effort",
        "n",
        "presence_penalty",
        "frequency_penalty",
        "logprobs",
        "top_logprobs",
        "logit_bias",
        "user",
        "metadata",
        "store",
        "verbosity",
        "service_tier",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "stream",
        "stream_options",
        "prediction",
        "modalities",
        "audio",
        "prompt_cache_key",
        "prompt_cache_retention",
        "prompt_cache_options",
        "web_search_options",
        "safety_identifier",
    ]
)


@dataclass(frozen=True)
class Rules:
    """What OpenAI documents for one model."""

    reasoning: bool = False
    efforts: tuple[str, ...] = ()
    default_effort: str | None = None
    logprobs: bool = True
    responses_only: bool = False
    cache_writes: bool = False  # bills prompt-cache writes (usage reports them)


CHAT = Rules()
O_SERIES = Rules(True, ("low", "medium", "high"), "medium", logprobs=False)
GPT5 = Rules(True, ("minimal", "low", "medium", "high"), "medium", logprobs=False)
GPT51 = Rules(True, ("none", "low", "medium", "high"), "none", logprobs=False)
GPT52 = Rules(True, ("none", "low", "medium", "high", "xhigh"), "none", logprobs=False)
CHAT_LATEST = Rules(logprobs=False)
PRO = Rules(True, ("medium", "high", "xhigh"), "high", logprobs=False, responses_only=True)

MODELS: dict[str, Rules] = {
    **dict.fromkeys(
        ("gpt-3.5-turbo", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"), CHAT
    ),
    **dict.fromkeys(("o1", "o3", "o3-mini", "o4-mini"), O_SERIES),
    "o3-pro": PRO,
    **dict.fromkeys(("gpt-5", "gpt-5-mini", "gpt-5-nano"), GPT5),
    "gpt-5-chat-latest": CHAT_LATEST,
    "gpt-5.1": GPT51,
    "gpt-5.1-chat-latest": CHAT_LATEST,
    "gpt-5.2": GPT52,
    "gpt-5.2-pro": PRO,
    **dict.fromkeys(("gpt-5.4", "gpt-5.4-mini", "gpt-5.5", "gpt-5.4-nano"), GPT52),
    **dict.fromkeys(
        ("gpt-5.6", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna"),
        replace(GPT52, efforts=(*GPT52.efforts, "max"), cache_writes=True),
    ),
}
# The pages (and SDK files) each model's rules were read from, and the day.
MODELS_PAGE = Citation("https://platform.openai.com/docs/models", "2026-12-03")
REASONING_PAGE = Citation("https://platform.openai.com/docs/guides/reasoning", "2026-12-03")
_SDK = "openai SDK 3.3.1 types/{}.py"
CHAT_MODEL_SDK = Citation(_SDK.format("shared/chat_model"), "2026-12-05")
EFFORT_SDK = Citation(_SDK.format("shared/reasoning_effort"), "2026-12-05")
CREATE_PARAMS_SDK = Citation(_SDK.format("chat/completion_create_params"), "2026-12-05")
CACHING_GUIDE = Citation("https://platform.openai.com/docs/guides/prompt-caching", "2026-12-03")
SOURCES: dict[str, tuple[Citation, ...]] = {
    name: (
        (CHAT_MODEL_SDK, EFFORT_SDK, CACHING_GUIDE)
        if name.startswith("gpt-5.6")
        else (MODELS_PAGE, REASONING_PAGE, CREATE_PARAMS_SDK)
    )
    for name in MODELS
}
_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def error(
    message: str, param: str | None = None, code: str | None = None, kind: str | None = None
) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": kind or "invalid_request_error",
            "param": param,
            "code": code,
        }
    }


def rules_of(model: str, models: dict[str, Rules]) -> Rules | None:
    return models.get(model) or models.get(_DATED.sub("", model))


def _effort(body: dict[str, Any], rules: Rules) -> str | None:
    return body.get("reasoning_effort") or rules.default_effort


def refusal(
    body: dict[str, Any], models: dict[str, Rules] = MODELS
) -> tuple[int, dict[str, Any]] | None:
    """The status and body OpenAI answers this chat request with, or None if accepted."""
    for name in body:
        if name not in KNOWN:
            return 400, error(f"Unrecognized request argument supplied: {name}")
    model = str(body.get("model", ""))
    rules = rules_of(model, models)
    if rules is None:
        message = f"The model `{model}` does not exist or you do not have access to it."
        return 404, error(message, None, "model_not_found")
    if rules.responses_only:
        message = "This model is only supported in v1/responses and not in v1/chat/completions."
        return 404, error(message, "model", "model_not_found")
    if not rules.reasoning and "reasoning_effort" in body:
        message = "Unsupported parameter: 'reasoning_effort' is not supported with this model."
        return 400, error(message, "reasoning_effort", "unsupported_parameter")
    refused = _reasoning_refusal(body, rules) if rules.reasoning else None
    if refused is not None:
        return 400, refused
    if body.get("top_logprobs") is not None and not 0 <= int(body["top_logprobs"]) <= 20:
        return 400, error("'top_logprobs' must be between 0 and 20.", "top_logprobs")
    json_mode = (body.get("response_format") or {}).get("type") == "json_object"
    if json_mode and "json" not in json.dumps(body.get("messages", [])).lower():
        message = (
            "'messages' must contain the word 'json' in some form, to use "
            "'response_format' of type 'json_object'."
        )
        return 400, error(message, "messages")
    return None


def _reasoning_refusal(body: dict[str, Any], rules: Rules) -> dict[str, Any] | None:
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in rules.efforts:
        allowed = ", ".join(f"'{e}'" for e in rules.efforts)
        message = f"Invalid value: '{effort}'. Supported values are: {allowed}."
        return error(message, "reasoning_effort", "invalid_value")
    unsupported = "Unsupported parameter: '{}' is not supported with this model."
    if "max_tokens" in body:
        message = unsupported.format("max_tokens") + " Use 'max_completion_tokens' instead."
        return error(message, "max_tokens", "unsupported_parameter")
    if "stop" in body:
        return error(unsupported.format("stop"), "stop", "unsupported_parameter")
    samples = _effort(body, rules) == "none"  # GPT-5.1 and later, without reasoning
    if body.get("logprobs") and not samples:
        return error(unsupported.format("logprobs"), "logprobs", "unsupported_parameter")
    for name in ("temperature", "top_p"):
        if name in body and body[name] != 1 and not samples:
            message = (
                f"Unsupported value: '{name}' does not support {json.dumps(body[name])} "
                "with this model. Only the default (1) value is supported."
            )
            return error(message, name, "unsupported_value")
    return None


def _first_token(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Top alternatives for the first token, fixed by the messages, most likely first."""
    seed = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).digest()
    weights = [1 + seed[i % len(seed)] for i in range(len(CHOICE_TOKENS))]
    total = sum(weights)
    ranked = sorted(zip(CHOICE_TOKENS, weights, strict=True), key=lambda tw: -tw[1])
    return [
        {"token": t, "logprob": math.log(w / total), "bytes": list(t.encode())} for t, w in ranked
    ]


def completion(
    body: dict[str, Any],
    answer: Answerer,
    models: dict[str, Rules] = MODELS,
    written: set[str] | None = None,
) -> dict[str, Any]:
    """The answer to an accepted chat request, its usage counted as the API counts it: a
    reasoning model's reasoning tokens count against `max_completion_tokens`; `written` holds
    the prompts a model that bills cache writes has cached so far."""
    messages = body["messages"]
    model = str(body["model"])
    rules = rules_of(model, models) or CHAT
    logprobs = None
    if body.get("logprobs"):
        top = _first_token(messages)
        text = str(top[0]["token"])
        shown = int(body.get("top_logprobs") or 0)
        logprobs = {"content": [{**top[0], "top_logprobs": top[:shown]}], "refusal": None}
    else:
        text = answer(messages)
    prompt = sum(tokens(str(m.get("content", ""))) + 4 for m in messages)
    effort = _effort(body, rules) if rules.reasoning else None
    reasoning = EFFORT_TOKENS[effort] if effort else 0
    budget = body.get("max_completion_tokens") or body.get("max_tokens")
    answered = 1 if logprobs else tokens(text)
    finish = "stop"
    if budget is not None and reasoning + answered > budget:
        finish, text = "length", ""  # the reasoning used the budget up: no visible answer
        answered = max(0, budget - reasoning)
        reasoning = min(reasoning, budget)
    return {
        "id": f"chatcmpl-{request_key(body)[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": finish,
                "logprobs": logprobs,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answered + reasoning,
            "total_tokens": prompt + answered + reasoning,
            "prompt_tokens_details": _prompt_details(body, prompt, rules, written),
            "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
        },
    }


def _prompt_details(
    body: dict[str, Any], prompt: int, rules: Rules, written: set[str] | None
) -> dict[str, int]:
    cached = cached_tokens(prompt)
    if not rules.cache_writes or written is None or not cached:
        return {"cached_tokens": cached, "audio_tokens": 0}
    key = request_key([body["model"], body["messages"]])
    if key in written:
        return {"cached_tokens": cached, "cache_write_tokens": 0, "audio_tokens": 0}
    written.add(key)
    return {"cached_tokens": 0, "cache_write_tokens": cached, "audio_tokens": 0}


def cached_tokens(prompt: int) -> int:
    """As OpenAI caches prompts: in blocks of 128 tokens past the first 1024, else none."""
    return 0 if prompt < 1024 else 1024 + (prompt - 1024) // 128 * 128
