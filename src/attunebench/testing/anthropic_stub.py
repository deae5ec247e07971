"""A local stand-in for Anthropic's Messages API and Message Batches, with the API's rules for
extended thinking and its error bodies.

Messages: `model`, `max_tokens` and `messages` are required and unknown fields refused
("Extra inputs are not permitted"). With `thinking` enabled the budget must be at least 1024
and below `max_tokens`, temperature may only be 1 and top_p between 0.95 and 1; the reply
starts with a thinking block, whose tokens are output tokens. Claude 4.5 models (and Opus
4.1) refuse temperature and top_p together.

Message Batches: a batch of up to 100,000 requests (custom ids of 1 to 64 letters, digits, _
or -, unique) is `in_progress` for as long as batches are held, then `ended`, its results at
`results_url`: `succeeded`, `errored` (a refused request, a planned failure), or `expired`
(as planned). Requests sent in batches are counted by custom id, live calls by body.

    with AnthropicStub() as stub:
        ...  # an anthropic/ model with base_url = stub.base_url
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

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
        "metadata",
        "stream",
        "tools",
        "tool_choice",
        "service_tier",
    }
)
ONE_SAMPLER = re.compile(r"claude-(opus-4-1|(opus|sonnet|haiku)-4-5)")
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
MAX_BATCH_REQUESTS = 100_000


def error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    request_id = f"req_{uuid.uuid4().hex[:24]}"
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": request_id}


def refusal(body: dict[str, Any]) -> str | None:
    """What the API says to a request it refuses, or None if it is accepted."""
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return f"{name}: Field required"
    for name in body:
        if name not in FIELDS:
            return f"{name}: Extra inputs are not permitted"
    thinking = body.get("thinking")
    if thinking is not None and thinking.get("type") == "enabled":
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
    if "temperature" in body and "top_p" in body and ONE_SAMPLER.search(str(body["model"])):
        return (
            "`temperature` and `top_p` cannot both be specified for this model. "
            "Please use only one."
        )
    return None


def reply(body: dict[str, Any], answer: Answerer) -> dict[str, Any]:
    """The message an accepted request gets; thinking tokens count as output tokens."""
    messages = list(body["messages"])
    text = answer([{"role": "system", "content": body.get("system", "")}, *messages])
    content: list[dict[str, Any]] = []
    thought = 0
    thinking = body.get("thinking") or {}
    if thinking.get("type") == "enabled":
        seed = body_key(messages)[:12]
        words = (
            f"The person wrote {len(messages)} message(s); weighing what they need ({seed}) "
            "before answering in the form asked."
        )
        content.append({"type": "thinking", "thinking": words, "signature": f"sig-{seed}"})
        thought = min(tokens(words) * 8, int(thinking["budget_tokens"]))
    content.append({"type": "text", "text": text})
    prompt = sum(tokens(json.dumps(m.get("content", ""))) + 3 for m in messages)
    prompt += tokens(str(body.get("system", "")))
    return {
        "id": f"msg_{body_key(body)[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt,
            "output_tokens": thought + tokens(text),
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
    def __init__(self, answer: Answerer = answer_from_prompt) -> None:
        super().__init__()
        self._answer = answer
        self.batches: dict[str, Batch] = {}

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/batches", self._create)
        app.router.add_get("/v1/messages/batches/{id}", self._retrieve)
        app.router.add_get("/v1/messages/batches/{id}/results", self._results)

    async def _messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        refused = refusal(body)
        preflight = bool(request.headers.get(PREFLIGHT_HEADER))
        self.counts.live_call(body, preflight=preflight, refused=refused is not None)
        if refused is not None:
            return web.json_response(error(refused), status=400)
        return web.json_response(reply(body, self._answer))

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
        self.counts.batches += 1
        batch = Batch(
            id=f"msgbatch_{uuid.uuid4().hex[:24]}",
            ordinal=self.counts.batches,
            requests=requests,
            created_at=datetime.now(UTC),
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
            refused = refusal(params)
            if custom_id in expired:
                self.counts.expired += 1
                result = {"type": "expired"}
            elif custom_id in failing:
                self.counts.failed_lines += 1
                result = {"type": "errored", "error": error("Internal server error", "api_error")}
            elif refused is not None:
                result = {"type": "errored", "error": error(refused)}
            else:
                self.counts.answered_in_batches += 1
                result = {"type": "succeeded", "message": reply(params, self._answer)}
            counts[str(result["type"])] += 1
            batch.results.append({"custom_id": custom_id, "result": result})
        batch.counts = counts
        batch.status = "ended"
        batch.ended_at = datetime.now(UTC)
