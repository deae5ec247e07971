"""A local stand-in for Anthropic's Messages API and Message Batches, with the API's rules for
sampling, thinking and effort, per model and per API version, and its error bodies.

`MODELS` is this module's own table, written from Anthropic's models overview and thinking
guides as documented on 2026-12-03, apart from the provider's capability table:

- the `anthropic-version` header is required; from `2026-10-21` no model takes
  `temperature`, `top_p` or `top_k`, at any value; under older versions Claude 4.7 and later
  refuse them too, and the Claude 4.5 models (and Opus 4.1) refuse temperature and top_p
  together;
- `thinking.type = "enabled"` (a `budget_tokens` of at least 1024 and below `max_tokens`)
  is for Claude 3.7 to 4.6; `"adaptive"` for Claude 4.6 and later, which 4.7 and later
  require; `output_config.effort` takes the values each model lists; Opus 5.5 and Fable
  5.1 ("adaptive, always on") think when `thinking` is left out;
- with thinking, temperature may only be 1 and top_p between 0.95 and 1; thinking tokens
  count against `max_tokens`, as output tokens, and in `output_tokens_details`; a reply
  that runs out of `max_tokens` ends with `stop_reason: "max_tokens"`;
- a model not listed is not found; unknown fields are refused ("Extra inputs are not
  permitted").

On demand it fails as an account can: `deny = "billing"` answers with a 400 `billing_error`,
`deny = "forbidden"` with a 403 `permission_error`.

Message Batches: a batch of up to 100,000 requests (custom ids of 1 to 64 letters, digits, _
or -, unique) is `in_progress` for as long as batches are held, then `ended`, its results at
`results_url` in an order of their own: `succeeded`, `errored` (a refused request, a planned
failure), or `expired` (as planned). Requests sent in batches are counted by custom id, live
calls by body.

    with AnthropicStub() as stub:
        ...  # an anthropic/ model with base_url = stub.base_url
"""

from __future__ import annotations

import json
import random
import re
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from aiohttp import web

from attunebench.models.preflight import PREFLIGHT_HEADER
from attunebench.testing.answers import answer_from_prompt
from attunebench.testing.stub_server import ThreadedStub, body_key, tokens

Answerer = Callable[[Sequence[dict[str, Any]]], str]
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
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
DOCS = "https://platform.claude.com/docs/en/build-with-claude/extended-thinking"
MAX_BATCH_REQUESTS = 100_000
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
        seed = body_key(messages)[:12]
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
        "id": f"msg_{body_key(body)[:24]}",
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


@dataclass
class Batch:
    id: str
    ordinal: int
    requests: list[dict[str, Any]]
    created_at: datetime
    status: str = "in_progress"
    results: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    ended_at: datetime | None = None
    version: str = ""

    def view(self, base_url: str) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        counts.update(self.counts or {"processing": len(self.requests)})
        ended = self.status == "ended"
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.status,
            "request_counts": counts,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "created_at": self.created_at.isoformat(),
            "expires_at": (self.created_at + timedelta(hours=24)).isoformat(),
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results" if ended else None,
        }


class AnthropicStub(ThreadedStub):
    def __init__(
        self, answer: Answerer = answer_from_prompt, models: dict[str, Rules] | None = None
    ) -> None:
        super().__init__()
        self._answer = answer
        self.models = {**MODELS, **(models or {})}
        self.batches: dict[str, Batch] = {}
        self.deny: Literal["billing", "forbidden"] | None = None
        self.versions: Counter[str] = Counter()  # anthropic-version headers seen

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/batches", self._create)
        app.router.add_get("/v1/messages/batches/{id}", self._retrieve)
        app.router.add_get("/v1/messages/batches/{id}/results", self._results)

    async def _messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        version = request.headers.get("anthropic-version")
        self.versions[str(version)] += 1
        if self.deny == "billing":
            message = "Your credit balance is too low to access the Anthropic API."
            return web.json_response(error(message, "billing_error"), status=400)
        if self.deny == "forbidden":
            message = "Your API key does not have permission to use the specified resource."
            return web.json_response(error(message, "permission_error"), status=403)
        refused = refusal(body, version, self.models)
        preflight = bool(request.headers.get(PREFLIGHT_HEADER))
        self.counts.live_call(body, preflight=preflight, refused=refused is not None)
        if refused is not None:
            kind = "not_found_error" if refused[0] == 404 else "invalid_request_error"
            return web.json_response(error(refused[1], kind), status=refused[0])
        return web.json_response(reply(body, self._answer, self.models))

    async def _create(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if not await self.creating(request):
            return web.Response(status=499)  # its client is gone: as if it never came
        requests = body.get("requests") or []
        if not requests or len(requests) > MAX_BATCH_REQUESTS:
            message = f"requests: List should have between 1 and {MAX_BATCH_REQUESTS} items"
            return web.json_response(error(message), status=400)
        ids = [str(r.get("custom_id", "")) for r in requests]
        for n, custom_id in enumerate(ids):
            if not CUSTOM_ID.fullmatch(custom_id):
                message = (
                    f"requests.{n}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
                )
                return web.json_response(error(message), status=400)
        if len(set(ids)) != len(ids):
            return web.json_response(error("requests: custom_id values must be unique"), status=400)
        version = request.headers.get("anthropic-version")
        self.versions[str(version)] += 1
        if not version:
            return web.json_response(error("anthropic-version: header is required"), status=400)
        self.counts.batches += 1
        batch = Batch(
            id=f"msgbatch_{uuid.uuid4().hex[:24]}",
            ordinal=self.counts.batches,
            requests=requests,
            created_at=datetime.now(UTC),
            version=version,
        )
        for custom_id in ids:
            self.counts.submitted[custom_id] += 1
        self.batches[batch.id] = batch
        return web.json_response(batch.view(self.base_url))

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return web.json_response(error("Batch not found", "not_found_error"), status=404)
        if batch.status == "in_progress" and not self.held(batch.ordinal):
            self._process(batch)
        return web.json_response(batch.view(self.base_url))

    async def _results(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.status != "ended":
            message = "Batch results are not available until processing has ended"
            return web.json_response(error(message, "not_found_error"), status=404)
        text = "".join(json.dumps(line) + "\n" for line in batch.results)
        return web.Response(text=text, content_type="application/binary")

    def _process(self, batch: Batch) -> None:
        ids = [r["custom_id"] for r in batch.requests]
        expired, failing = self.batch_plan(batch.ordinal, ids)
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for item in batch.requests:
            custom_id, params = item["custom_id"], item["params"]
            result: dict[str, Any]
            refused = refusal(params, batch.version, self.models)
            if custom_id in expired:
                self.counts.expired += 1
                result = {"type": "expired"}
            elif custom_id in failing:
                self.counts.failed_lines += 1
                result = {"type": "errored", "error": error("Internal server error", "api_error")}
            elif refused is not None:
                result = {"type": "errored", "error": error(refused[1])}
            else:
                self.counts.answered_in_batches += 1
                message = reply(params, self._answer, self.models)
                result = {"type": "succeeded", "message": message}
            counts[str(result["type"])] += 1
            batch.results.append({"custom_id": custom_id, "result": result})
        random.Random(batch.id).shuffle(batch.results)  # in an order of their own
        batch.counts = counts
        batch.status = "ended"
        batch.ended_at = datetime.now(UTC)
