"""Anthropic's Messages API rules, as the stand-in server applies them: which models exist,
which requests each refuses, and how an accepted one is answered.

`MODELS` is this module's own table, written from Anthropic's models overview and thinking
guides as documented on 2026-12-03, apart from the provider's capability table:

- the `anthropic-version` header is required; from `2026-10-21` no model takes
  `temperature`, `top_p` or `top_k`, at any value; under older versions Claude 4.7 and later
  refuse them too, and the Claude 4.5 models refuse temperature and top_p together;
- `thinking.type = "enabled"` (a `budget_tokens` of at least 1024 and below `max_tokens`)
  is for Claude 3.7 to 4.6; `"adaptive"` for Claude 4.6 and later, which 4.7 and later
  require; `output_config.effort` takes the values each model lists; Opus 5.5 and Fable
  5.1 ("adaptive, always on") think when `thinking` is left out;
- with thinking, temperature may only be 1 and top_p between 0.95 and 1; thinking tokens
  count against `max_tokens`, as output tokens, and in `output_tokens_details`; a reply
  that runs out of `max_tokens` ends with `stop_reason: "max_tokens"`;
- a model not listed is not found; unknown fields are refused ("Extra inputs are not
  permitted").
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
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
    }
)
SAMPLERS = ("temperature", "top_p", "top_k")
NO_SAMPLING_FROM = "2026-10-21"
DOCS = "https://platform.claude.com/docs/en/build-with-claude/extended-thinking"
EFFORT_THOUGHT = {"low": 64, "medium": 256, "high": 1024, "xhigh": 2048, "max": 4096}


@dataclass(frozen=True)
class Rules:
    """What Anthropic documents for one model."""

    samples: bool = True  # takes temperature, top_p, top_k (before 2026-10-21)
    one_sampler: bool = False  # not temperature and top_p together
    thinking: tuple[str, ...] = ()
    efforts: tuple[str, ...] = ()
    thinks_unasked: bool = False


CLAUDE_3 = Rules()
BUDGET = Rules(thinking=("enabled",))
ONE_SAMPLER = Rules(one_sampler=True, thinking=("enabled",))
CLAUDE_46 = Rules(thinking=("enabled", "adaptive"), efforts=("low", "medium", "high", "max"))
ADAPTIVE = Rules(
    samples=False, thinking=("adaptive",), efforts=("low", "medium", "high", "xhigh", "max")
)
ALWAYS_THINKS = Rules(
    samples=False,
    thinking=("adaptive",),
    efforts=("low", "medium", "high", "xhigh", "max"),
    thinks_unasked=True,
)
MODELS: dict[str, Rules] = {
    "claude-3-5-haiku-20241022": CLAUDE_3,
    "claude-3-7-sonnet-20250219": BUDGET,
    "claude-sonnet-4-20250514": BUDGET,
    "claude-sonnet-4-5": ONE_SAMPLER,
    "claude-haiku-4-5": ONE_SAMPLER,
    "claude-haiku-4-5-20251001": ONE_SAMPLER,
    "claude-opus-4-5": ONE_SAMPLER,
    "claude-sonnet-4-6": CLAUDE_46,
    "claude-opus-4-6": CLAUDE_46,
    "claude-opus-4-7": ADAPTIVE,
    "claude-opus-4-8": ADAPTIVE,
    "claude-sonnet-5": ADAPTIVE,
    "claude-opus-5": ADAPTIVE,
    "claude-sonnet-5-5": ADAPTIVE,
    "claude-mythos-5": ADAPTIVE,
    "claude-haiku-5-5": ADAPTIVE,
    "claude-opus-5-5": ALWAYS_THINKS,
    "claude-fable-5-1": ALWAYS_THINKS,
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
    if kind not in rules.thinking and kind != "disabled":
        if kind == "enabled" and "adaptive" in rules.thinking:
            return (
                '"thinking.type.enabled" is not supported for this model. Use '
                '"thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
            )
        return f"thinking.type: Input tag '{kind}' is not supported for this model"
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
    """Thinking tokens the reply spends: the budget's share, or the effort's."""
    thinking = body.get("thinking") or ({"type": "adaptive"} if rules.thinks_unasked else {})
    if thinking.get("type") == "enabled":
        return min(400, int(thinking["budget_tokens"]))
    if thinking.get("type") == "adaptive":
        return EFFORT_THOUGHT[(body.get("output_config") or {}).get("effort") or "high"]
    return 0


def reply(
    body: dict[str, Any], answer: Answerer, models: dict[str, Rules] = MODELS
) -> dict[str, Any]:
    """The message an accepted request gets; thinking tokens count as output tokens and
    against `max_tokens`."""
    messages = list(body["messages"])
    text = answer([{"role": "system", "content": body.get("system", "")}, *messages])
    content: list[dict[str, Any]] = []
    thought = _thought(body, models.get(str(body["model"]), CLAUDE_3))
    if thought:
        seed = request_key(messages)[:12]
        words = (
            f"The person wrote {len(messages)} message(s); weighing what they need ({seed}) "
            "before answering in the form asked."
        )
        content.append({"type": "thinking", "thinking": words, "signature": f"sig-{seed}"})
    room = int(body["max_tokens"]) - thought
    stop = "end_turn"
    if tokens(text) > room:  # thinking took the budget: the answer is cut off
        stop, text = "max_tokens", text[: max(0, room) * 4]
        thought = min(thought, int(body["max_tokens"]))
    content.append({"type": "text", "text": text})
    prompt = sum(tokens(json.dumps(m.get("content", ""))) + 3 for m in messages)
    prompt += tokens(str(body.get("system", "")))
    return {
        "id": f"msg_{request_key(body)[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt,
            "output_tokens": thought + tokens(text),
            "output_tokens_details": {"thinking_tokens": thought},
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
