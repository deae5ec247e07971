"""OpenAI's chat-completion rules, as the stand-in server applies them: which requests a model
refuses (with the API's error bodies) and how an accepted one is answered and counted.

Reasoning models (the o-series and the GPT-5 family, not the `-chat` ones) refuse
`max_tokens` ("Use 'max_completion_tokens' instead") and any temperature or top_p but the
default 1; their reasoning tokens (set by `reasoning_effort`) count against
`max_completion_tokens`, as output tokens, and in `usage.completion_tokens_details`. Other
models refuse `reasoning_effort`. Unknown fields are refused as unrecognized arguments, and
JSON mode wants the word "json" in the messages.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from attunebench.testing.stub_server import body_key, tokens

Answerer = Callable[[Sequence[dict[str, Any]]], str]
REASONING = (re.compile(r"o\d+(?:-.*)?"), re.compile(r"gpt-5(?!.*chat)(?:[.-].*)?"))
EFFORT_TOKENS = {"none": 0, "minimal": 8, "low": 48, "medium": 160, "high": 480}
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
        "safety_identifier",
    ]
)


def error(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


def is_reasoning(model: str) -> bool:
    return any(p.fullmatch(model.rsplit("/", 1)[-1]) for p in REASONING)


def refusal(body: dict[str, Any]) -> dict[str, Any] | None:
    """The 400 body OpenAI answers this chat request with, or None if it is accepted."""
    for name in body:
        if name not in KNOWN:
            return error(f"Unrecognized request argument supplied: {name}")
    model = str(body.get("model", ""))
    if is_reasoning(model):
        if "max_tokens" in body:
            message = (
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead."
            )
            return error(message, "max_tokens", "unsupported_parameter")
        for name in ("temperature", "top_p"):
            if name in body and body[name] != 1:
                message = (
                    f"Unsupported value: '{name}' does not support {json.dumps(body[name])} "
                    "with this model. Only the default (1) value is supported."
                )
                return error(message, name, "unsupported_value")
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in EFFORT_TOKENS:
            message = (
                f"Invalid value: '{effort}'. Supported values are: 'minimal', 'low', 'medium', "
                "and 'high'."
            )
            return error(message, "reasoning_effort", "invalid_value")
    elif "reasoning_effort" in body:
        message = "Unsupported parameter: 'reasoning_effort' is not supported with this model."
        return error(message, "reasoning_effort", "unsupported_parameter")
    if (body.get("response_format") or {}).get("type") == "json_object":
        said = json.dumps(body.get("messages", [])).lower()
        if "json" not in said:
            message = (
                "'messages' must contain the word 'json' in some form, to use "
                "'response_format' of type 'json_object'."
            )
            return error(message, "messages")
    return None


def completion(body: dict[str, Any], answer: Answerer) -> dict[str, Any]:
    """The answer to an accepted chat request, its usage counted as the API counts it."""
    messages = body["messages"]
    model = str(body["model"])
    text = answer(messages)
    prompt = sum(tokens(str(m.get("content", ""))) + 4 for m in messages)
    reasoning = (
        EFFORT_TOKENS[body.get("reasoning_effort") or "medium"] if is_reasoning(model) else 0
    )
    budget = body.get("max_completion_tokens") or body.get("max_tokens")
    answered = tokens(text)
    finish = "stop"
    if budget is not None and reasoning + answered > budget:
        finish, text = "length", ""  # the reasoning used the budget up: no visible answer
        answered = max(0, budget - reasoning)
        reasoning = min(reasoning, budget)
    return {
        "id": f"chatcmpl-{body_key(body)[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": finish,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": answered + reasoning,
            "total_tokens": prompt + answered + reasoning,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": reasoning, "audio_tokens": 0},
        },
    }
