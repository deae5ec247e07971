"""What `openai/` sends and reads besides plain chat: raw completions and option probabilities.

A model with no chat template (`chat = false`) is asked through `/completions`: a task's prompt
as plain text, a conversation as a transcript ending in "Assistant:", stopped at the next
"User:" line. In choice mode the next token's top logprobs are asked for (`top_logprobs` on
chat completions, `logprobs` on completions)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from attunebench.models.base import (
    ChoiceOutput,
    GenerateParams,
    Message,
    ProviderError,
)
from attunebench.models.choice import completion_prompt, from_top_logprobs

TOP_LOGPROBS = 20  # the most the OpenAI API returns; vLLM and llama.cpp accept it
SPEAKERS = {"user": "User", "assistant": "Assistant"}
NEXT_SPEAKER = "\nUser:"


def transcript_prompt(messages: Sequence[Message]) -> tuple[str, list[str]]:
    """A conversation as a plain transcript the model continues as the assistant, and the
    stop sequence that ends its reply at the next speaker."""
    system = [m.content.strip() for m in messages if m.role == "system"]
    lines = [f"{SPEAKERS[m.role]}: {m.content.strip()}" for m in messages if m.role != "system"]
    if messages and messages[-1].role == "user" and len(lines) > 1:
        return "\n\n".join([*system, "\n".join(lines)]) + "\nAssistant:", [NEXT_SPEAKER]
    return completion_prompt(messages), []


def completion_body(
    model: str, messages: Sequence[Message], params: GenerateParams
) -> dict[str, Any]:
    prompt, stop = transcript_prompt(messages)
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
