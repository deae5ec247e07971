"""A local stand-in for Anthropic's Messages API (streamed too), Message Batches and models
endpoint, with the API's rules (`anthropic_rules`) and error bodies (what it refuses and fails
on demand: docs/frontier.md). Its output-token rate limit reserves a request's `max_tokens`
when it starts and gives back what it did not use when it ends, as Anthropic's does.

    with AnthropicStub() as stub:
        ...  # an anthropic/ model with base_url = stub.base_url
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, Field, ValidationError

from attunebench.frozen import first_problem
from attunebench.models.preflight import PREFLIGHT_HEADER
from testkit.servers.answers import answer_from_prompt
from testkit.servers.anthropic_rules import (
    MODELS,
    Rules,
    cache_use,
    description,
    error,
    refusal,
    reply,
    stream_events,
)
from testkit.servers.served import Answerer, StubBatch, ThreadedStub

MAX_BATCH_REQUESTS = 100_000


class BatchRequest(BaseModel):
    custom_id: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    params: dict[str, Any]


class BatchCreate(BaseModel):
    """A create request's body, refused as the API refuses it (a pydantic message)."""

    requests: list[BatchRequest] = Field(min_length=1, max_length=MAX_BATCH_REQUESTS)


@dataclass(kw_only=True)
class Batch(StubBatch):
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


ON_DEMAND = {
    408: ("Request timed out.", "timeout_error"),
    409: ("Conflict: the resource is locked; retry.", "conflict_error"),
    500: ("Internal server error", "api_error"),
    529: ("Overloaded", "overloaded_error"),
}


class OutputBucket:
    """An output-token rate limit: `limit` tokens a minute, refilled continuously."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._level = float(limit)
        self._at = time.monotonic()

    def level(self) -> float:
        now = time.monotonic()
        self._level = min(float(self.limit), self._level + self.limit / 60 * (now - self._at))
        self._at = now
        return self._level

    def take(self, tokens: int) -> bool:
        if tokens > self.level():
            return False
        self._level -= tokens
        return True

    def give_back(self, tokens: int) -> None:
        self._level = min(float(self.limit), self.level() + tokens)

    def headers(self) -> dict[str, str]:
        return {
            "anthropic-ratelimit-output-tokens-limit": str(self.limit),
            "anthropic-ratelimit-output-tokens-remaining": str(int(self.level())),
        }

    def wait_s(self, tokens: int) -> float:
        return max(0.0, (tokens - self.level()) * 60 / self.limit)


def answered(
    body: dict[str, Any], message: dict[str, Any], headers: dict[str, str] | None = None
) -> web.Response:
    """An accepted call's answer: the message, or (`stream: true`) its server-sent events."""
    if not body.get("stream"):
        return web.json_response(message, headers=headers)
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in stream_events(message))
    return web.Response(text=text, content_type="text/event-stream", headers=headers)


class AnthropicStub(ThreadedStub[Rules, Batch]):
    def __init__(
        self, answer: Answerer = answer_from_prompt, models: dict[str, Rules] | None = None
    ) -> None:
        super().__init__(answer, {**MODELS, **(models or {})}, "/v1/messages/batches")
        self.deny: Literal["billing", "forbidden"] | None = None
        self.refuse_with: str | None = None  # every message call refused (400) saying this
        self.versions: Counter[str] = Counter()  # anthropic-version headers seen
        self.models_endpoint: Literal["served", "silent", "gone"] = "served"
        self.described: Counter[str] = Counter()  # models described, by id
        self.latency_s = 0.0
        self._bucket: OutputBucket | None = None
        self._cached: set[str] = set()  # prompt prefixes written to the cache

    @property
    def output_tokens_per_minute(self) -> int | None:
        return self._bucket.limit if self._bucket is not None else None

    @output_tokens_per_minute.setter
    def output_tokens_per_minute(self, limit: int | None) -> None:
        self._bucket = OutputBucket(limit) if limit is not None else None

    def api_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_get("/v1/models/{id}", self._describe)
        app.router.add_get(f"{self.batches_path}/{{id}}/results", self._results)

    async def _describe(self, request: web.Request) -> web.Response:
        model = request.match_info["id"]
        rules = self.models.get(model)
        if self.models_endpoint == "gone":
            return web.Response(status=404, text="404: Not Found")
        if rules is None:
            return web.json_response(error(f"model: {model}", "not_found_error"), status=404)
        self.described[model] += 1
        silent = self.models_endpoint == "silent"
        return web.json_response(description(model, rules, silent=silent))

    def _denied(self) -> web.Response | None:
        if self.refuse_with is not None:
            return web.json_response(error(self.refuse_with), status=400)
        if self.deny == "billing":
            message = "Your credit balance is too low to access the Anthropic API."
            return web.json_response(error(message, "billing_error"), status=400)
        if self.deny == "forbidden":
            message = "Your API key does not have permission to use the specified resource."
            return web.json_response(error(message, "permission_error"), status=403)
        status = self.failure_due()
        if status is not None:
            said, kind = ON_DEMAND.get(status, ("Failed on demand", "api_error"))
            return web.json_response(error(said, kind), status=status)
        return None

    async def _messages(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        version = request.headers.get("anthropic-version")
        self.versions[str(version)] += 1
        denied = self._denied()
        if denied is not None:
            return denied
        refused = refusal(body, version, self.models)
        preflight = bool(request.headers.get(PREFLIGHT_HEADER))
        bucket = self._bucket
        if refused is None and bucket is not None and not bucket.take(int(body["max_tokens"])):
            return self._rate_limited(bucket, int(body["max_tokens"]))
        self.counts.live_call(body, preflight=preflight, refused=refused is not None)
        if refused is not None:
            kind = "not_found_error" if refused[0] == 404 else "invalid_request_error"
            return web.json_response(error(refused[1], kind), status=refused[0])
        await asyncio.sleep(self.latency_s)
        answer = self._reply(body)
        if bucket is None:
            return answered(body, answer)
        bucket.give_back(int(body["max_tokens"]) - int(answer["usage"]["output_tokens"]))
        return answered(body, answer, bucket.headers())

    def _reply(self, body: dict[str, Any]) -> dict[str, Any]:
        return reply(body, self._answer, self.models, cache_use(body, self._cached, self.models))

    def _rate_limited(self, bucket: OutputBucket, asked: int) -> web.Response:
        """A 429 for a request whose `max_tokens` the output-token bucket cannot hold now."""
        self.counts.rate_limited += 1
        message = (
            "This request would exceed the rate limit for your organization of "
            f"{bucket.limit:,} output tokens per minute."
        )
        wait = bucket.wait_s(asked)
        headers = {**bucket.headers(), "retry-after": str(max(1, round(wait)))}
        headers["retry-after-ms"] = str(round(wait * 1000))
        return web.json_response(error(message, "rate_limit_error"), status=429, headers=headers)

    def made(self, body: dict[str, Any], request: web.Request) -> Batch | web.Response:
        try:
            requests = BatchCreate.model_validate(body).requests
        except ValidationError as invalid:
            where, problem = first_problem(invalid)
            return web.json_response(error(f"{where}: {problem}"), status=400)
        ids = [r.custom_id for r in requests]
        if len(set(ids)) != len(ids):
            return web.json_response(error("requests: custom_id values must be unique"), status=400)
        version = request.headers.get("anthropic-version")
        self.versions[str(version)] += 1
        if not version:
            return web.json_response(error("anthropic-version: header is required"), status=400)
        return Batch(
            id=f"msgbatch_{uuid.uuid4().hex[:24]}",
            ordinal=self.count_batch(ids),
            requests=[r.model_dump() for r in requests],
            created_at=datetime.now(UTC),
            version=version,
        )

    def missing(self, batch_id: str) -> web.Response:
        return web.json_response(error("Batch not found", "not_found_error"), status=404)

    def advance(self, batch: Batch) -> None:
        if batch.status == "in_progress" and not self.held(batch):
            self._process(batch)

    async def _results(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None or batch.status != "ended":
            message = "Batch results are not available until processing has ended"
            return web.json_response(error(message, "not_found_error"), status=404)
        text = "".join(json.dumps(line) + "\n" for line in batch.results)
        return web.Response(text=text, content_type="application/binary")

    def _process(self, batch: Batch) -> None:
        expired, failing = self.batch_plan(batch, [r["custom_id"] for r in batch.requests])
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for item in batch.requests:
            custom_id, params = item["custom_id"], item["params"]
            result: dict[str, Any]
            refused = refusal(params, batch.version, self.models)
            if custom_id in expired:
                result = {"type": "expired"}
            elif custom_id in failing:
                result = {"type": "errored", "error": error("Internal server error", "api_error")}
            elif refused is not None:
                result = {"type": "errored", "error": error(refused[1])}
            else:
                self.counts.answered_in_batches += 1
                result = {"type": "succeeded", "message": self._reply(params)}
            counts[str(result["type"])] += 1
            batch.results.append({"custom_id": custom_id, "result": result})
        random.Random(batch.id).shuffle(batch.results)  # in an order of their own
        batch.counts = counts
        batch.status = "ended"
        batch.ended_at = datetime.now(UTC)
