"""OpenAI's wire format as `openai/` uses it: which server a base URL is, whose rules it follows
(`api`), a chat completion read into a `ModelOutput` (live, or a batch's line), a task's answer
schema as `response_format`, and what it sends besides plain chat.

A model with no chat template (`chat = false`) is asked through `/completions`: a task's prompt
as plain text, a conversation as a transcript ending in "Assistant:", stopped at the next
"User:" line. In choice mode the next token's top logprobs are asked for (`top_logprobs` on
chat completions, `logprobs` on completions)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlparse

from attunebench.answerform import Schema, is_strict
from attunebench.models.base import (
    ChoiceOutput,
    GenerateParams,
    Message,
    ModelOutput,
    ProviderError,
)
from attunebench.models.choice import completion_prompt, from_top_logprobs
from attunebench.models.registry import ProviderConfigError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOSTS = frozenset({"api.openai.com"})
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
Api = Literal["openai", "compatible"]
URLs = list[str] | tuple[str, ...]
TOP_LOGPROBS = 20  # the most the OpenAI API returns; vLLM and llama.cpp accept it
SPEAKERS = {"user": "User", "assistant": "Assistant"}
NEXT_SPEAKER = "\nUser:"
# What the pre-flight sends a model that takes JSON schemas: PROBE_MESSAGES' answer.
PROBE_SCHEMA: Schema = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


def resolve_base_urls(base_url: str | None, base_urls: URLs | None) -> list[str]:
    """Explicit URLs first, then OPENAI_BASE_URL, then OpenAI's own; trailing slashes dropped.
    A value that is no http(s) URL is refused, naming where it came from."""
    urls = list(base_urls or ()) or ([base_url] if base_url else [])
    origin = "base_urls"
    if not urls:
        urls = [os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL]
        origin = "OPENAI_BASE_URL" if os.environ.get("OPENAI_BASE_URL") else "base_url"
    for url in urls:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError(
                f"{origin} {url!r} is not a URL: give one like http://127.0.0.1:8000/v1"
            )
    return [url.rstrip("/") for url in urls]


def resolve_api_key(spec: str, key: str | None, env: str, urls: Sequence[str]) -> str | None:
    """The key given, else the variable's; refused if missing unless every server is local."""
    key = key if key is not None else os.environ.get(env)
    if not key and not all(urlparse(url).hostname in LOCAL_HOSTS for url in urls):
        raise ProviderConfigError(
            f"{spec}: environment variable {env} is not set (needed for {', '.join(urls)})"
        )
    return key or None


def default_api(urls: Sequence[str]) -> Api:
    """OpenAI's rules for OpenAI's API, the common ones for any other server."""
    return "openai" if all(urlparse(u).hostname in OPENAI_HOSTS for u in urls) else "compatible"


def parse_completion(body: bytes, latency_s: float) -> ModelOutput:
    """A ModelOutput from a chat-completions (or completions) body; a malformed one is retryable."""
    try:
        data = json.loads(body)
    except ValueError as error:
        snippet = body[:200].decode("utf-8", "replace")
        raise ProviderError(
            f"malformed completion ({error!r}): {snippet}", retryable=True
        ) from None
    return completion_output(data, latency_s)


def completion_output(data: Any, latency_s: float) -> ModelOutput:
    """A ModelOutput from a chat completion (live, or a batch's line) or a completion."""
    try:
        choice = data["choices"][0]
        message = choice.get("message") or {"content": choice["text"]}
        usage = data.get("usage") or {}
        details = usage.get("completion_tokens_details") or {}
        prompt = usage.get("prompt_tokens_details") or {}
        # vLLM's and SGLang's reasoning parsers, and routers, return the reasoning text apart.
        thinking = message.get("reasoning_content") or message.get("reasoning")
        return ModelOutput(
            text=message.get("content") or "",
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=latency_s,
            finish_reason=choice.get("finish_reason"),
            raw={"id": data.get("id"), "model": data.get("model")},
            reasoning_tokens=int(details.get("reasoning_tokens") or 0),
            thinking=thinking if isinstance(thinking, str) and thinking else None,
            cached_input_tokens=int(prompt.get("cached_tokens") or 0),
            cache_write_tokens=int(prompt.get("cache_write_tokens") or 0),
        )
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
        snippet = json.dumps(data)[:200] if isinstance(data, dict) else repr(data)[:200]
        message = f"malformed completion ({error!r}): {snippet}"
        raise ProviderError(message, retryable=True) from None


def schema_format(schema: Schema) -> dict[str, Any]:
    """`response_format` for a JSON schema, as OpenAI's structured outputs and llama.cpp's
    server read it; `strict` only where the schema is one OpenAI's strict mode takes."""
    spec = {"name": "answer", "schema": schema, "strict": is_strict(schema)}
    return {"type": "json_schema", "json_schema": spec}


def completion_body(
    model: str, messages: Sequence[Message], params: GenerateParams
) -> dict[str, Any]:
    """A conversation as a plain transcript the model continues as the assistant, stopped at
    the next speaker; a single prompt as it is."""
    system = [m.content.strip() for m in messages if m.role == "system"]
    lines = [f"{SPEAKERS[m.role]}: {m.content.strip()}" for m in messages if m.role != "system"]
    prompt, stop = completion_prompt(messages), []
    if messages and messages[-1].role == "user" and len(lines) > 1:
        prompt = "\n\n".join([*system, "\n".join(lines)]) + "\nAssistant:"
        stop = [NEXT_SPEAKER]
    body: dict[str, Any] = {
        "model": model,
        "prompt": prompt,
        "temperature": params.temperature,
        "max_tokens": params.max_tokens,
        "stop": [*params.stop, *stop] or None,
    }
    if params.seed is not None:
        body["seed"] = params.seed
    return {k: v for k, v in body.items() if v is not None}


def choice_body(model: str, messages: Sequence[Message], params: GenerateParams) -> dict[str, Any]:
    """One next token's top log probabilities from completions (a chat model's: `request_body`)."""
    body: dict[str, Any] = {
        "model": model,
        "prompt": completion_prompt(messages),
        "max_tokens": 1,
        "temperature": params.temperature,
        "logprobs": TOP_LOGPROBS,
    }
    if params.seed is not None:
        body["seed"] = params.seed
    body.update(params.extra)
    return body


def parse_choice(body: bytes, keys: Sequence[str]) -> ChoiceOutput:
    """The keys' probabilities from a chat or completions body with logprobs."""
    try:
        data = json.loads(body)
        logprobs = data["choices"][0]["logprobs"]
        if "content" in logprobs:  # chat completions
            entries = logprobs["content"][0]["top_logprobs"]
            top = {str(e["token"]): float(e["logprob"]) for e in entries}
        else:  # completions: one {token: logprob} per generated token
            top = {str(k): float(v) for k, v in logprobs["top_logprobs"][0].items()}
        usage = data.get("usage") or {}
        tokens = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    except (ValueError, KeyError, IndexError, TypeError) as error:
        snippet = body[:200].decode("utf-8", "replace")
        raise ProviderError(
            f"no logprobs in the answer ({error!r}): {snippet}", retryable=False
        ) from None
    return from_top_logprobs(top, keys, input_tokens=tokens[0], output_tokens=tokens[1])
