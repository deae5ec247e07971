"""Anthropic's Messages API rules, as the stand-in server applies them: which models exist,
which requests each refuses, how an accepted one is answered (thinking, effort, the prompt
cache, `max_tokens`), and how the models endpoint describes each (`description`).

`MODELS`, `EFFORTS` and `THINKING_TYPES` are this module's own, written from Anthropic's pages
and SDK (the sources of each in `SOURCES`, with the day read) and importing nothing from the
capability tables, so that a test can compare the two fact by fact and a wrong fact there
cannot certify itself (`tests/models/test_documented.py`).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, replace
from typing import Any

from attunebench.models.batching import request_key
from attunebench.models.capabilities import Citation, tables
from testkit.servers.served import Answerer, tokens

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


@dataclass(frozen=True)
class Rules:
    """What Anthropic documents for one model."""

    samples: bool = True  # takes temperature, top_p, top_k (before 2026-10-21)
    one_sampler: bool = False  # not temperature and top_p together
    thinking: tuple[str, ...] = ("disabled",)  # the thinking types a request may state
    efforts: tuple[str, ...] = ()
    default_effort: str | None = None  # the effort applied when none is sent
    off_max_effort: str | None = None  # thinking off only at this effort or lower
    thinks_unasked: bool = False  # thinks when `thinking` is left out
    display: str = "summarized"  # thinking text shown unless `thinking.display` says
    max_output: int = 64_000  # the largest max_tokens
    context: int = 200_000
    lifecycle: str = "active"
    cache_min: int = 1024  # the shortest prefix the prompt cache keeps


def _page(path: str, read: str = "2026-12-05") -> Citation:
    """A page of Anthropic's docs this module's facts were read from, and the day."""
    return Citation(f"https://platform.claude.com/docs/{path}", read)


OVERVIEW = _page("en/about-claude/models/overview", "2026-12-03")
EXTENDED = _page("en/build-with-claude/extended-thinking", "2026-12-03")
ADAPTIVE_PAGE = _page("en/build-with-claude/adaptive-thinking", "2026-12-03")
EFFORT_PAGE = _page("en/build-with-claude/effort")
CACHING = _page("en/build-with-claude/prompt-caching")
RETIRED_PAGE = _page("en/about-claude/model-deprecations")
OPUS_5_PAGE = _page("zh-CN/models/opus-5/overview")
SONNET_55_PAGE = _page("en/models/sonnet-5-5/migration-guide")
FABLE_5_PAGE = _page("en/models/fable-5/migration-guide")
THINKING_TYPES_SDK = Citation("anthropic SDK 2.17.0 types/thinking_types.py", "2026-12-05")
# The effort levels, lowest first, and the thinking types the API names (the effort page; the
# SDK's `ThinkingTypes`), with the sources of each in `SOURCES`.
EFFORTS = ("low", "medium", "high", "xhigh", "max")
THINKING_TYPES = ("adaptive", "enabled", "disabled", "between_tools")
CLAUDE_3 = Rules(max_output=4_096, cache_min=2048)
RETIRED_3_5 = replace(CLAUDE_3, max_output=8_192, lifecycle="retired")
BUDGET = Rules(thinking=("enabled", "disabled"))
ONE_SAMPLER = Rules(one_sampler=True, thinking=("enabled", "disabled"))
CLAUDE_46 = Rules(
    thinking=("adaptive", "enabled", "disabled"),
    efforts=("low", "medium", "high", "max"),
    default_effort="high",
    max_output=128_000,
)
ADAPTIVE = replace(CLAUDE_46, samples=False, thinking=("adaptive", "disabled"), efforts=EFFORTS)
CLAUDE_5 = replace(ADAPTIVE, thinks_unasked=True)
# "thinking can only be disabled when effort is high or lower" (Opus 5; Haiku 5.5 the same)
OFF_UP_TO_HIGH = replace(CLAUDE_5, off_max_effort="high")
# "send `thinking: {"type": "between_tools"}` instead of `"disabled"`" (Sonnet 5.5)
SONNET_5_5_RULES = replace(CLAUDE_5, thinking=("adaptive", "between_tools"), display="omitted")
ALWAYS_THINKS = replace(CLAUDE_5, thinking=("adaptive",))
_RETIRED = (OVERVIEW, CACHING, RETIRED_PAGE)
_BUDGET_PAGES = (OVERVIEW, EXTENDED, CACHING)
_ADAPTIVE_PAGES = (OVERVIEW, ADAPTIVE_PAGE, EFFORT_PAGE)
_FABLE_PAGES = (OVERVIEW, FABLE_5_PAGE, EFFORT_PAGE)
_64K = replace(ALWAYS_THINKS, max_output=64_000)
MODELS, SOURCES = tables(
    (("claude-3-haiku-20240307",), CLAUDE_3, (OVERVIEW, CACHING)),
    (("claude-3-opus-20240229",), replace(CLAUDE_3, cache_min=1024, lifecycle="retired"), _RETIRED),
    (("claude-3-5-haiku-20241022",), RETIRED_3_5, _RETIRED),
    (("claude-3-5-sonnet-20241022",), replace(RETIRED_3_5, cache_min=1024), _RETIRED),
    (
        ("claude-3-7-sonnet-20250219",),
        replace(BUDGET, lifecycle="retired"),
        (*_BUDGET_PAGES, RETIRED_PAGE),
    ),
    (("claude-sonnet-4-20250514",), BUDGET, _BUDGET_PAGES),
    (
        ("claude-opus-4-20250514", "claude-opus-4-1-20250805"),
        replace(BUDGET, max_output=32_000),
        _BUDGET_PAGES,
    ),
    (("claude-sonnet-4-5",), ONE_SAMPLER, _BUDGET_PAGES),
    (
        ("claude-haiku-4-5", "claude-haiku-4-5-20251001"),
        replace(ONE_SAMPLER, cache_min=4096),
        _BUDGET_PAGES,
    ),
    (
        ("claude-opus-4-5",),
        replace(
            ONE_SAMPLER, efforts=("low", "medium", "high"), default_effort="high", cache_min=4096
        ),
        (*_BUDGET_PAGES, EFFORT_PAGE),
    ),
    (
        ("claude-sonnet-4-6", "claude-opus-4-6"),
        CLAUDE_46,
        (*_BUDGET_PAGES, ADAPTIVE_PAGE, EFFORT_PAGE),
    ),
    (("claude-opus-4-7", "claude-opus-4-8"), ADAPTIVE, _ADAPTIVE_PAGES),
    (("claude-sonnet-5",), replace(CLAUDE_5, display="omitted"), _ADAPTIVE_PAGES),
    (("claude-opus-5",), OFF_UP_TO_HIGH, (OVERVIEW, OPUS_5_PAGE, EFFORT_PAGE)),
    (("claude-sonnet-5-5",), SONNET_5_5_RULES, (OVERVIEW, SONNET_55_PAGE, EFFORT_PAGE)),
    (
        ("claude-haiku-5-5",),
        replace(OFF_UP_TO_HIGH, default_effort="medium"),
        (OVERVIEW, THINKING_TYPES_SDK, EFFORT_PAGE),
    ),
    (("claude-fable-5",), _64K, _FABLE_PAGES),
    (("claude-mythos-5",), ALWAYS_THINKS, _FABLE_PAGES),
    (("claude-opus-5-5",), replace(ALWAYS_THINKS, default_effort="medium"), _ADAPTIVE_PAGES),
    (("claude-fable-5-1",), _64K, (OVERVIEW, ADAPTIVE_PAGE)),
    (
        ("claude-fable-5-2", "claude-mythos-5-1", "claude-mythos-5-2"),
        ALWAYS_THINKS,
        (OVERVIEW, ADAPTIVE_PAGE),
    ),
)
SOURCES |= {"EFFORTS": (EFFORT_PAGE,), "THINKING_TYPES": (THINKING_TYPES_SDK,)}


def _support(supported: bool) -> dict[str, bool]:
    return {"supported": supported}


def description(model: str, rules: Rules, *, silent: bool = False) -> dict[str, Any]:
    """The model's `GET /v1/models/{id}` body (`ModelInfo`); `silent`: without capabilities."""
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
    if rules is None or rules.lifecycle == "retired":
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
        if kind == "disabled" and "between_tools" in rules.thinking:
            return (
                'thinking.type: "disabled" is not supported for this model. To turn off '
                'up-front thinking, send "between_tools".'
            )
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
    if kind in ("disabled", "between_tools"):
        return _thinking_off(kind, body, rules)
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


def _thinking_off(kind: str, body: dict[str, Any], rules: Rules) -> str | None:
    """Thinking off is refused at an effort above the model's ceiling for it."""
    ceiling = rules.off_max_effort
    effort = (body.get("output_config") or {}).get("effort") or rules.default_effort
    if ceiling is None or effort not in EFFORTS or EFFORTS.index(effort) <= EFFORTS.index(ceiling):
        return None
    return (
        f'thinking.type: "{kind}" can only be used when effort is {ceiling} or lower; '
        f'got output_config.effort "{effort}"'
    )


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
        effort = (body.get("output_config") or {}).get("effort") or rules.default_effort
        return EFFORT_THOUGHT[effort or "high"]
    return 0  # disabled, or between_tools with no tools to think between


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


def cache_use(
    body: dict[str, Any], written: set[str], models: dict[str, Rules] = MODELS
) -> tuple[int, int, int]:
    """(read, written for five minutes, written for an hour) of a request's prompt cache: with
    a top-level `cache_control`, its prefix (all but the last message) of at least the model's
    `cache_min` tokens is read if `written` holds it, else written there."""
    control = body.get("cache_control")
    if not isinstance(control, dict):
        return 0, 0, 0
    prefix = {"system": body.get("system", ""), "messages": body["messages"][:-1]}
    size = prompt_tokens(prefix)
    if size < models.get(str(body["model"]), Rules()).cache_min:
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


def _empty(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] == "thinking":
        return {**block, "thinking": "", "signature": ""}
    return {**block, "text": ""}


def _delta(block: dict[str, Any]) -> list[dict[str, Any]]:
    if block["type"] == "thinking":
        return [
            {"type": "thinking_delta", "thinking": block["thinking"]},
            {"type": "signature_delta", "signature": block["signature"]},
        ]
    return [{"type": "text_delta", "text": block["text"]}]


def stream_events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message as the streaming API sends it: `message_start` (no content, one output
    token), each block as one delta, `message_delta` (stop reason, usage), `message_stop`."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        events.append(
            {"type": "content_block_start", "index": index, "content_block": _empty(block)}
        )
        events += [
            {"type": "content_block_delta", "index": index, "delta": delta}
            for delta in _delta(block)
        ]
        events.append({"type": "content_block_stop", "index": index})
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]}
    events.append({"type": "message_delta", "delta": stop, "usage": usage})
    events.append({"type": "message_stop"})
    return events
