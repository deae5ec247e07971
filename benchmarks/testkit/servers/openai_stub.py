"""A local stand-in for OpenAI's API: chat completions by `openai_rules`, and the Files and
Batch APIs, with the API's own error bodies (what it refuses and fails on demand:
docs/frontier.md). A batch goes `validating`, `in_progress` (while batches are held),
`finalizing`, then `completed` or `expired`.

    with OpenAIStub() as stub:
        ...  # an openai/ model with base_url = stub.base_url + "/v1", api = "openai"
"""

from __future__ import annotations

import json
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from attunebench.models.preflight import PREFLIGHT_HEADER
from testkit.servers.answers import answer_from_prompt
from testkit.servers.openai_rules import (
    MODELS,
    Rules,
    completion,
    error,
    refusal,
)
from testkit.servers.served import Answerer, StubBatch, ThreadedStub, tokens

CHAT = "/v1/chat/completions"
MAX_BATCH_REQUESTS = 50_000


@dataclass(kw_only=True)
class Batch(StubBatch):
    input_file_id: str
    lines: list[dict[str, Any]]
    created_at: int
    status: str = "validating"
    errors: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    stamps: dict[str, int] = field(default_factory=dict)
    tokens: int = 0  # input tokens enqueued

    def view(self, base_url: str) -> dict[str, Any]:
        ended = ("completed_at", "expired_at", "failed_at", "finalizing_at", "in_progress_at")
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": CHAT,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "expires_at": self.created_at + 86_400,
            **{name: self.stamps.get(name) for name in ended},
            "cancelling_at": None,
            "cancelled_at": None,
            "request_counts": {
                "total": len(self.lines),
                "completed": self.counts.get("completed", 0),
                "failed": self.counts.get("failed", 0),
            },
            "metadata": None,
        }


QUOTA = error(
    "You exceeded your current quota, please check your plan and billing details.",
    None,
    "insufficient_quota",
    "insufficient_quota",
)
FORBIDDEN = error(
    "Project does not have access to this model.", None, "model_not_found", "invalid_request_error"
)


class OpenAIStub(ThreadedStub[Rules, Batch]):
    def __init__(
        self, answer: Answerer = answer_from_prompt, models: dict[str, Rules] | None = None
    ) -> None:
        super().__init__(answer, {**MODELS, **(models or {})}, "/v1/batches")
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.deny: Literal["quota", "forbidden"] | None = None
        self.rate_limited = 0
        self.enqueued_token_limit: int | None = None
        self._written: set[str] = set()  # prompts cached by models that bill cache writes

    def api_routes(self, app: web.Application) -> None:
        app.router.add_get("/v1/models", self._models)
        app.router.add_post(CHAT, self._chat)
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_get(self.batches_path, self._list)

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "stub", "object": "model"}]})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.bodies.append(body)
        status = self.failure_due()
        if status is not None:
            failed = error(f"Failed on demand with HTTP {status}.", None, None, "server_error")
            return web.json_response(failed, status=status)
        if self.deny is not None:
            status, answer = (429, QUOTA) if self.deny == "quota" else (403, FORBIDDEN)
            self.counts.refused += 1
            return web.json_response(answer, status=status)
        if self.rate_limited > 0:
            self.rate_limited -= 1
            limited = error("Rate limit reached for requests.", None, "rate_limit_exceeded")
            headers = {"retry-after-ms": "20", "retry-after": "1"}
            return web.json_response(limited, status=429, headers=headers)
        status, answer = self._respond(body)
        preflight = bool(request.headers.get(PREFLIGHT_HEADER))
        self.counts.live_call(body, preflight=preflight, refused=status != 200)
        return web.json_response(answer, status=status)

    def _respond(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and body a chat request is answered with, by the API's rules."""
        refused = refusal(body, self.models)
        if refused is not None:
            return refused
        return 200, completion(body, self._answer, self.models, self._written)

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        purpose, upload = form.get("purpose"), form.get("file")
        if purpose not in ("batch", "fine-tune", "assistants", "user_data", "vision"):
            return web.json_response(error(f"Invalid purpose: {purpose!s}", "purpose"), status=400)
        if not isinstance(upload, web.FileField):
            return web.json_response(error("No file given.", "file"), status=400)
        return web.json_response(self._keep(upload.file.read(), str(purpose), upload.filename))

    async def _content(self, request: web.Request) -> web.Response:
        file_id = request.match_info["id"]
        if file_id not in self.files:
            return web.json_response(error(f"No such File object: {file_id}", "id"), status=404)
        return web.Response(body=self.files[file_id][1], content_type="application/octet-stream")

    def made(self, body: dict[str, Any], request: web.Request) -> Batch | web.Response:
        if body.get("endpoint") != CHAT or body.get("completion_window") != "24h":
            return web.json_response(error("Unsupported endpoint or window."), status=400)
        file_id = str(body.get("input_file_id"))
        if file_id not in self.files or self.files[file_id][0]["purpose"] != "batch":
            return web.json_response(error(f"No such File object: {file_id}", "id"), status=404)
        lines = [json.loads(line) for line in self.files[file_id][1].splitlines() if line]
        errors = validate(lines)
        enqueued = sum(
            tokens(str(m.get("content", ""))) for line in lines for m in line["body"]["messages"]
        )
        if not errors and self.enqueued_token_limit is not None:
            running = sum(b.tokens for b in self.batches.values() if b.status in RUNNING)
            if running + enqueued > self.enqueued_token_limit:
                errors = [enqueued_error(enqueued, self.enqueued_token_limit)]
        return Batch(
            id=f"batch_{uuid.uuid4().hex[:24]}",
            ordinal=self.count_batch([] if errors else [line["custom_id"] for line in lines]),
            input_file_id=file_id,
            lines=lines,
            created_at=int(time.time()),
            errors=errors,
            tokens=enqueued,
        )

    async def _list(self, request: web.Request) -> web.Response:
        """The latest batches first, `limit` a page, after the batch `after`."""
        limit = min(100, int(request.query.get("limit", "20")))
        ordered = sorted(self.batches.values(), key=lambda b: -b.ordinal)
        after = request.query.get("after")
        if after is not None:
            ids = [b.id for b in ordered]
            ordered = ordered[ids.index(after) + 1 :] if after in ids else []
        page = [batch.view(self.base_url) for batch in ordered[:limit]]
        return web.json_response(
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(ordered) > limit,
            }
        )

    def missing(self, batch_id: str) -> web.Response:
        return web.json_response(
            error(f"No batch found with id '{batch_id}'.", "batch_id"), status=404
        )

    def advance(self, batch: Batch) -> None:
        now = int(time.time())
        if batch.status == "validating":
            batch.status = "failed" if batch.errors else "in_progress"
            batch.stamps["failed_at" if batch.errors else "in_progress_at"] = now
        elif batch.status == "in_progress" and not self.held(batch):
            batch.status = "finalizing"
            batch.stamps["finalizing_at"] = now
        elif batch.status == "finalizing":
            expired = self._process(batch)
            batch.status = "expired" if expired else "completed"
            batch.stamps["expired_at" if expired else "completed_at"] = now

    def _process(self, batch: Batch) -> bool:
        """Answer the batch's requests into its output and error files; whether it expired."""
        expired, failing = self.batch_plan(batch, [line["custom_id"] for line in batch.lines])
        output: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for line in batch.lines:
            key = line["custom_id"]
            result: dict[str, Any] = {"id": f"batch_req_{uuid.uuid4().hex[:24]}", "custom_id": key}
            if key in expired:
                message = "This request could not be executed before the completion window expired."
                expired_error = {"code": "batch_expired", "message": message}
                errors.append({**result, "response": None, "error": expired_error})
                continue
            if key in failing:
                message = "The server had an error processing your request."
                status, answer = 500, error(message, kind="server_error")
            else:
                status, answer = self._respond(line["body"])
                self.counts.answered_in_batches += status == 200
            response = {"status_code": status, "request_id": uuid.uuid4().hex, "body": answer}
            (output if status == 200 else errors).append(
                {**result, "response": response, "error": None}
            )
        shuffle = random.Random(batch.id)  # the API's files come in an order of their own
        shuffle.shuffle(output)
        shuffle.shuffle(errors)
        batch.counts = {"completed": len(output), "failed": len(errors)}
        batch.output_file_id = self._store(output, "batch_output") if output else None
        batch.error_file_id = self._store(errors, "batch_output") if errors else None
        return bool(expired)

    def _store(self, lines: list[dict[str, Any]], purpose: str) -> str:
        data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        return str(self._keep(data, purpose, f"{purpose}.jsonl")["id"])

    def _keep(self, data: bytes, purpose: str, filename: str) -> dict[str, Any]:
        """A file kept as the Files API keeps it; its metadata."""
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
            "status_details": None,
        }
        self.files[file_id] = (meta, data)
        return meta


RUNNING = frozenset({"validating", "in_progress", "finalizing"})


def enqueued_error(tokens: int, limit: int) -> dict[str, Any]:
    message = (
        f"Enqueued token limit reached for this model in organization org-stub. Limit: "
        f"{limit} enqueued tokens (this batch: {tokens}). Please try submitting an older "
        "batch once completed."
    )
    return problem("token_limit_exceeded", message)


def problem(
    code: str, message: str, param: str | None = None, line: int | None = None
) -> dict[str, Any]:
    """One of a batch's errors, as the API lists them."""
    return {"code": code, "message": message, "param": param, "line": line}


def validate(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The errors that fail a batch at validation: its lines' shape, ids and one model."""
    problems: list[dict[str, Any]] = []
    seen: set[str] = set()
    models = {str(line.get("body", {}).get("model")) for line in lines}
    if len(lines) > MAX_BATCH_REQUESTS:
        said = f"Batch has {len(lines)} requests; the limit is {MAX_BATCH_REQUESTS}."
        problems.append(problem("too_many_requests", said))
    if len(models) > 1:
        said = "The provided model does not match the other requests in the batch."
        problems.append(problem("mismatched_model", said, "body.model"))
    for number, line in enumerate(lines, 1):
        key = line.get("custom_id")
        if line.get("method") != "POST" or line.get("url") != CHAT or not key:
            said = "Each line needs custom_id, method POST and the batch's url."
            problems.append(problem("invalid_request", said, line=number))
        elif key in seen:
            said = f"The custom_id '{key}' is not unique."
            problems.append(problem("duplicate_custom_id", said, "custom_id", number))
        seen.add(str(key))
    return problems
