"""Anthropic's Message Batches for `anthropic/` models with `batch = true`: one batch of Messages
API bodies, polled until it has `ended`, and its results read back."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from attunebench.models.base import ProviderError
from attunebench.models.batching import BatchAPI, BatchLimits, BatchState, line_failure

LIMITS = BatchLimits(max_requests=100_000, max_bytes=240 * 1024 * 1024)
# The HTTP status each error type of the Messages API stands for.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicBatches(BatchAPI[Any]):
    """Message Batches through the provider's SDK client and its error mapping (`calling`)."""

    def __init__(self, client: Any, calling: Callable[[Awaitable[Any]], Awaitable[Any]]) -> None:
        self.limits = LIMITS
        self._client = client
        self._calling = calling

    def line_bytes(self, key: str, body: dict[str, Any]) -> int:
        return len(json.dumps({"custom_id": key, "params": body}).encode()) + 2

    async def submit(
        self, requests: Sequence[tuple[str, dict[str, Any]]], prepared: str | None
    ) -> str:
        batch = await self._calling(
            self._client.messages.batches.create(
                requests=[{"custom_id": key, "params": body} for key, body in requests]
            )
        )
        return str(batch.id)

    async def state(self, batch_id: str) -> BatchState:
        batch = await self._calling(self._client.messages.batches.retrieve(batch_id))
        status = str(batch.processing_status)
        return BatchState(ended=status == "ended", status=status)

    async def results(self, batch_id: str, state: BatchState) -> dict[str, Any]:
        lines = await self._calling(self._client.messages.batches.results(batch_id))
        answers: dict[str, Any | ProviderError] = {}
        async for line in lines:
            answers[line.custom_id] = read_result(line.result)
        return answers


def read_result(result: Any) -> Any:
    """A succeeded result's message, or why there is none."""
    if result.type == "succeeded":
        return result.message
    if result.type == "errored":
        error = result.error.error
        status = ERROR_STATUS.get(error.type, 500)
        return line_failure(f"{error.type} in batch: {error.message}", status)
    return line_failure(f"request {result.type} in its batch")  # canceled, expired
