"""A local stand-in for Anthropic's Messages API and Message Batches, with the API's rules
(`anthropic_rules`: per model and per API version, its own table of models) and its error
bodies.

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
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from aiohttp import web

from attunebench.models.preflight import PREFLIGHT_HEADER
from attunebench.testing.answers import answer_from_prompt
from attunebench.testing.anthropic_rules import (
    MODELS,
    Rules,
    error,
    refusal,
    reply,
)
from attunebench.testing.served import Answerer
from attunebench.testing.stub_server import StubBatch, ThreadedStub

CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
MAX_BATCH_REQUESTS = 100_000


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


class AnthropicStub(ThreadedStub[Rules]):
    def __init__(
        self, answer: Answerer = answer_from_prompt, models: dict[str, Rules] | None = None
    ) -> None:
        super().__init__(answer, {**MODELS, **(models or {})})
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
        if batch.status == "in_progress" and not self.held(batch):
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
        expired, failing = self.batch_plan(batch, ids)
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
