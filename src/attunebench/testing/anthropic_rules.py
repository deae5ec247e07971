"""Anthropic's Messages API rules, as the stand-in server applies them: which models exist,
which requests each refuses, how an accepted one is answered, and how the models endpoint
describes each.

`MODELS` is this module's own table, written from Anthropic's models overview, thinking
guides and models API as documented on 2026-12-03, apart from the provider's capability
table (each is checked against those documents, not against the other):

- the `anthropic-version` header is required; from `2026-10-21` no model takes
  `temperature`, `top_p` or `top_k`, at any value; under older versions Claude 4.7 and later
  refuse them too, and the Claude 4.5 models refuse temperature and top_p together;
- `thinking.type = "enabled"` (a `budget_tokens` of at least 1024 and below `max_tokens`)
  is for Claude 3.7 to 4.6; `"adaptive"` for Claude 4.6 and later, which 4.7 and later
  require; `"disabled"` for every model but those that always think (Opus 5.5 and Fable 5.1:
  "adaptive, always on"); `output_config.effort` takes the values each model lists;
- the Claude 5 families (Opus 5, Sonnet 5, Sonnet 5.5, Haiku 5.5, Fable 5 and 5.1, Mythos 5,
  Opus 5.5) think when `thinking` is left out; Sonnet 5 and 5.5 show no thinking text unless
  asked (`thinking.display`, default `"omitted"`);
- with thinking, temperature may only be 1 and top_p between 0.95 and 1; thinking tokens
  count against `max_tokens`, as output tokens, and in `output_tokens_details`; a reply
  that runs out of `max_tokens` ends with `stop_reason: "max_tokens"`; `max_tokens` above the
  model's output limit is refused;
- with a top-level `cache_control`, a prompt's prefix (all but the last message) of 1,024
  tokens or more is written to the cache (`cache_creation`, five minutes or `ttl = "1h"`) and
  read back by the next request with the same prefix (`cache_read_input_tokens`);
- a model not listed is not found; unknown fields are refused ("Extra inputs are not
  permitted"). `description` is a model's `GET /v1/models/{id}` body.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, replace
from typing import Any

from attunebench.models.batching import request_key
from attunebench.testing.served import Answerer
from attunebench.testing.stub_server import tokens

FIELDS = frozenset(
    {
        "model",
        "max_tokens",
        "messages",
        "system",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "thinking",
        "output_config",
        "metadata",
        "stream",
        "tools",
        "tool_choice",
        "service_tier",
        "cache_control",
    }
)
SAMPLERS = ("temperature", "top_p", "top_k")
NO_SAMPLING_FROM = "2026-10-21"
DOCS = "https://platform.claude.com/docs/en/build-with-claude/extended-thinking"
EFFORT_THOUGHT = {"low": 64, "medium": 256, "high": 1024, "xhigh": 2048, "max": 4096}
THINKING_TYPES = ("adaptive", "enabled", "disabled", "between_tools")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
CACHE_MIN_TOKENS = 1024


@dataclass(frozen=True)
class Rules:
    """What Anthropic documents for one model."""

    samples: bool = True  # takes temperature, top_p, top_k (before 2026-10-21)
    one_sampler: bool = False  # not temperature and top_p together
    thinking: tuple[str, ...] = ("disabled",)  # the thinking types a request may state
    efforts: tuple[str, ...] = ()
    thinks_unasked: bool = False  # thinks when `thinking` is left out
    display: str = "summarized"  # thinking text shown unless `thinking.display` says
    max_output: int = 64_000  # the largest max_tokens
    context: int = 200_000
    lifecycle: str = "active"


CLAUDE_3 = Rules(max_output=8_192)
BUDGET = Rules(thinking=("enabled", "disabled"))
ONE_SAMPLER = Rules(one_sampler=True, thinking=("enabled", "disabled"))
CLAUDE_46 = Rules(
    thinking=("adaptive", "enabled", "disabled"), efforts=("low", "medium", "high", "max")
)
ADAPTIVE = Rules(samples=False, thinking=("adaptive", "disabled"), efforts=EFFORTS)
CLAUDE_5 = replace(ADAPTIVE, thinks_unasked=True)
SONNET_5 = replace(CLAUDE_5, display="omitted")
ALWAYS_THINKS = replace(CLAUDE_5, thinking=("adaptive",))
MODELS: dict[str, Rules] = {
    "claude-3-5-haiku-20241022": CLAUDE_3,
    "claude-3-7-sonnet-20250219": BUDGET,
    "claude-sonnet-4-20250514": BUDGET,
    "claude-sonnet-4-5": ONE_SAMPLER,
    "claude-haiku-4-5": ONE_SAMPLER,
    "claude-haiku-4-5-20251001": ONE_SAMPLER,
    "claude-opus-4-5": ONE_SAMPLER,
    "claude-sonnet-4-6": CLAUDE_46,
    "claude-opus-4-6": replace(CLAUDE_46, max_output=128_000),
    "claude-opus-4-7": replace(ADAPTIVE, max_output=128_000),
    "claude-opus-4-8": replace(ADAPTIVE, max_output=128_000),
    "claude-sonnet-5": SONNET_5,
    "claude-opus-5": replace(CLAUDE_5, max_output=128_000),
    "claude-sonnet-5-5": SONNET_5,
    "claude-mythos-5": replace(CLAUDE_5, max_output=128_000),
    "claude-haiku-5-5": CLAUDE_5,
    "claude-fable-5": CLAUDE_5,
    "claude-opus-5-5": replace(ALWAYS_THINKS, max_output=128_000),
    "claude-fable-5-1": ALWAYS_THINKS,
}


def _support(supported: bool) -> dict[str, bool]:
    return {"supported": supported}


def description(model: str, rules: Rules, *, silent: bool = False) -> dict[str, Any]:
    """The model's `GET /v1/models/{id}` body (the SDK's `ModelInfo`); `silent`: one from a
    server that describes no capabilities."""
    effort = {level: _support(level in rules.efforts) for level in EFFORTS}
    thinking = {kind: _support(kind in rules.thinking) for kind in THINKING_TYPES}
    tools = {"supported": False, "code_execution": _support(False), "web_search": _support(False)}
    capabilities = {
        "batch": _support(True),
        "citations": _support(True),
        "code_execution": _support(False),
        "context_management": {"supported": False},
        "effort": {"supported": bool(rules.efforts), **effort},
        "image_input": _support(True),
        "pdf_input": _support(True),
        "server_tools": tools,
        "structured_outputs": _support(True),
        "thinking": {"supported": rules.thinking != ("disabled",), "types": thinking},
    }
    return {
        "type": "model",
        "id": model,
        "display_name": model.replace("-", " ").title(),
        "created_at": "2026-01-01T00:00:00Z",
        "lifecycle": rules.lifecycle,
        "deprecated_at": None,
        "retires_at": None,
        "max_input_tokens": rules.context,
        "max_tokens": rules.max_output,
        "capabilities": None if silent else capabilities,
    }


def error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    request_id = f"req_{uuid.uuid4().hex[:24]}"
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id}


def refusal(
    body: dict[str, Any], version: str | None, models: dict[str, Rules] = MODELS
) -> tuple[int, str] | None:
    """The status and message the API answers this request with, or None if accepted."""
    if not version:
        return 400, "anthropic-version: header is required"
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return 400, f"{name}: Field required"
    for name in body:
        if name not in FIELDS:
            return 400, f"{name}: Extra inputs are not permitted"
    rules = models.get(str(body["model"]))
    if rules is None:
        return 404, f"model: {body['model']}"
    if int(body["max_tokens"]) > rules.max_output:
        return 400, (
            f"max_tokens: {body['max_tokens']} > {rules.max_output}, which is the maximum "
            f"allowed number of output tokens for {body['model']}"
        )
    said = _sampling(body, version, rules) or _thinking(body, rules) or _effort(body, rules)
    return (400, said) if said is not None else None


def _sampling(body: dict[str, Any], version: str, rules: Rules) -> str | None:
    sent = [name for name in SAMPLERS if name in body]
    if sent and version >= NO_SAMPLING_FROM:
        return (
            f"{sent[0]}: sampling parameters are not supported from API version {NO_SAMPLING_FROM}"
        )
    if sent and not rules.samples:
        return f"`{sent[0]}` is deprecated for this model."
    if "temperature" in body and "top_p" in body and rules.one_sampler:
        return (
            "`temperature` and `top_p` cannot both be specified for this model. "
            "Please use only one."
        )
    return None


def _thinking(body: dict[str, Any], rules: Rules) -> str | None:
    thinking = body.get("thinking")
    if thinking is None:
        return None
    kind = thinking.get("type")
    if kind not in rules.thinking:
        if kind == "disabled":
            return (
                'thinking.type: "disabled" is not supported for this model, which always thinks. '
                'Use "thinking.type.adaptive" and "output_config.effort" to control it.'
            )
        if kind == "enabled" and "adaptive" in rules.thinking:
            return (
                '"thinking.type.enabled" is not supported for this model. Use '
                '"thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
            )
        return f"thinking.type: Input tag '{kind}' is not supported for this model"
    if kind == "disabled":
        return None
    if kind == "enabled":
        budget = int(thinking.get("budget_tokens", 0))
        if budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if body["max_tokens"] <= budget:
            return (
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                f"documentation at {DOCS}#max-tokens-and-context-window-size"
            )
    if body.get("temperature", 1) != 1:
        return (
            "`temperature` may only be set to 1 when thinking is enabled. Please consult our "
            f"documentation at {DOCS}#important-considerations-when-using-extended-thinking"
        )
    if not 0.95 <= body.get("top_p", 1) <= 1:
        return (
            "`top_p` must be unset or between 0.95 and 1 when thinking is enabled. Please "
            f"consult our documentation at {DOCS}"
        )
    return None


def _effort(body: dict[str, Any], rules: Rules) -> str | None:
    config = body.get("output_config") or {}
    effort = config.get("effort")
    if effort is None:
        return None
    if not rules.efforts:
        return "output_config.effort: This model does not support the effort parameter."
    if effort not in rules.efforts:
        allowed = ", ".join(f"'{e}'" for e in rules.efforts)
        return f"output_config.effort: Input should be {allowed}"
    return None


def _thought(body: dict[str, Any], rules: Rules) -> int:
    """Thinking tokens the reply spends: the budget's share, or the effort's; a model that
    thinks unasked thinks adaptively when `thinking` is left out."""
    thinking = body.get("thinking") or ({"type": "adaptive"} if rules.thinks_unasked else {})
    if thinking.get("type") == "enabled":
        return min(400, int(thinking["budget_tokens"]))
    if thinking.get("type") == "adaptive":
        return EFFORT_THOUGHT[(body.get("output_config") or {}).get("effort") or "high"]
    return 0


def _thinking_block(body: dict[str, Any], rules: Rules, messages: list[Any]) -> dict[str, Any]:
    seed = request_key(messages)[:12]
    display = (body.get("thinking") or {}).get("display") or rules.display
    words = (
        f"The person wrote {len(messages)} message(s); weighing what they need ({seed}) "
        "before answering in the form asked."
    )
    shown = words if display == "summarized" else ""
    return {"type": "thinking", "thinking": shown, "signature": f"sig-{seed}"}


def prompt_tokens(body: dict[str, Any]) -> int:
    messages = body["messages"]
    prompt = sum(tokens(json.dumps(m.get("content", ""))) + 3 for m in messages)
    return prompt + tokens(str(body.get("system", "")))


def cache_use(body: dict[str, Any], written: set[str]) -> tuple[int, int, int]:
    """(read, written for five minutes, written for an hour) of a request's prompt cache: with
    a top-level `cache_control`, its prefix (system and all messages but the last) of at least
    CACHE_MIN_TOKENS is read if `written` holds it, else written there."""
    control = body.get("cache_control")
    if not isinstance(control, dict):
        return 0, 0, 0
    prefix = {"system": body.get("system", ""), "messages": body["messages"][:-1]}
    size = prompt_tokens(prefix)
    if size < CACHE_MIN_TOKENS:
        return 0, 0, 0
    key = request_key([body["model"], prefix])
    if key in written:
        return size, 0, 0
    written.add(key)
    return (0, 0, size) if control.get("ttl") == "1h" else (0, size, 0)


def reply(
    body: dict[str, Any],
    answer: Answerer,
    models: dict[str, Rules] = MODELS,
    cache: tuple[int, int, int] = (0, 0, 0),
) -> dict[str, Any]:
    """The message an accepted request gets; thinking tokens count as output tokens and
    against `max_tokens`; `cache` is what it read from and wrote to the prompt cache."""
    messages = list(body["messages"])
    text = answer([{"role": "system", "content": body.get("system", "")}, *messages])
    content: list[dict[str, Any]] = []
    rules = models.get(str(body["model"]), CLAUDE_3)
    thought = _thought(body, rules)
    if thought:
        content.append(_thinking_block(body, rules, messages))
    room = int(body["max_tokens"]) - thought
    stop = "end_turn"
    if tokens(text) > room:  # thinking took the budget: the answer is cut off
        stop, text = "max_tokens", text[: max(0, room) * 4]
        thought = min(thought, int(body["max_tokens"]))
    content.append({"type": "text", "text": text})
    read, five_minutes, hour = cache
    return {
        "id": f"msg_{request_key(body)[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt_tokens(body) - read - five_minutes - hour,
            "output_tokens": thought + tokens(text),
            "output_tokens_details": {"thinking_tokens": thought},
            "cache_creation_input_tokens": five_minutes + hour,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": five_minutes,
                "ephemeral_1h_input_tokens": hour,
            },
        },
    }
