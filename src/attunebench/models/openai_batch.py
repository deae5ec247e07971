"""OpenAI's Batch API for `openai/` models with `batch = true`: the requests uploaded as a JSONL
file, a batch over /v1/chat/completions with a 24-hour window, polled until it ends, and its
output and error files read back."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import aiohttp

from attunebench.models.base import ProviderError
from attunebench.models.batching import BatchAPI, BatchLimits, BatchState, line_failure
from attunebench.models.capabilities import family
from attunebench.models.http_errors import status_error

CHAT_PATH = "/v1/chat/completions"
ENDED = frozenset({"completed", "expired", "cancelled", "failed"})
LIMITS = BatchLimits(max_requests=50_000, max_bytes=190 * 1024 * 1024)
# The enqueued-token limit (OpenAI's "batch queue limit": input tokens of a model's running
# batches) at usage tier 1, per model, as OpenAI listed them; the default budget of
# `batch_tokens`, set it to your tier's. A model not listed gets the lowest listed.
ENQUEUED_TOKENS: Final[Mapping[str, int]] = {
    "gpt-3.5-turbo": 2_000_000,
    "gpt-4": 100_000,
    "gpt-4-turbo": 90_000,
    "gpt-4o": 90_000,
    "gpt-4o-mini": 2_000_000,
    "gpt-4.1": 900_000,
    "o1": 90_000,
    "o3": 90_000,
    "gpt-5": 1_500_000,
    "gpt-5-mini": 5_000_000,
}
LOWEST_ENQUEUED: Final = min(ENQUEUED_TOKENS.values())


def enqueued_tokens(model: str) -> int:
    """The default enqueued-token budget of a model's batches.

    >>> enqueued_tokens("gpt-4o-2024-08-06"), enqueued_tokens("gpt-9")
    (90000, 90000)
    """
    return ENQUEUED_TOKENS.get(family(model), LOWEST_ENQUEUED)


def batch_line(key: str, body: dict[str, Any]) -> bytes:
    line = {"custom_id": key, "method": "POST", "url": CHAT_PATH, "body": body}
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


class OpenAIBatches(BatchAPI[dict[str, Any]]):
    """The Batch API at one base URL, through the provider's HTTP session."""

    def __init__(self, base_url: str, session: Callable[[], aiohttp.ClientSession]) -> None:
        self.base_url = base_url
        self.limits = LIMITS
        self._session = session

    def line_bytes(self, key: str, body: dict[str, Any]) -> int:
        return len(batch_line(key, body))

    async def prepare(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> str:
        """Upload the requests as the batch's input file; its id."""
        data = b"".join(batch_line(key, body) for key, body in requests)
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field(
            "file", data, filename="attunebench-batch.jsonl", content_type="application/jsonl"
        )
        payload = form()
        # The session's JSON content type would hide the multipart boundary: say it here.
        headers = {"Content-Type": payload.content_type}
        uploaded = await self._call("POST", "/files", data=payload, headers=headers)
        return str(uploaded["id"])

    async def submit(
        self, requests: Sequence[tuple[str, dict[str, Any]]], prepared: str | None
    ) -> str:
        file_id = prepared if prepared is not None else await self.prepare(requests)
        created = await self._call(
            "POST",
            "/batches",
            data=json.dumps(
                {
                    "input_file_id": file_id,
                    "endpoint": CHAT_PATH,
                    "completion_window": "24h",
                    "metadata": {"made_by": "attunebench"},
                }
            ).encode(),
        )
        return str(created["id"])

    async def find(self, prepared: str, pages: int = 10) -> str | None:
        """The batch made from the input file `prepared`, among the latest (newest first)."""
        after = ""
        for _ in range(pages):
            listed = await self._call("GET", f"/batches?limit=100{after}")
            batches = listed.get("data") or []
            for batch in batches:
                if batch.get("input_file_id") == prepared:
                    return str(batch["id"])
            if not listed.get("has_more") or not batches:
                return None
            after = f"&after={batches[-1]['id']}"
        return None

    async def state(self, batch_id: str) -> BatchState:
        batch = await self._call("GET", f"/batches/{batch_id}")
        status = str(batch.get("status"))
        errors = (batch.get("errors") or {}).get("data") or []
        error = "; ".join(str(e.get("message")) for e in errors) or None
        return BatchState(ended=status in ENDED, status=status, error=error)

    async def results(
        self, batch_id: str, state: BatchState
    ) -> dict[str, dict[str, Any] | ProviderError]:
        batch = await self._call("GET", f"/batches/{batch_id}")
        answers: dict[str, dict[str, Any] | ProviderError] = {}
        for field in ("error_file_id", "output_file_id"):  # an answer outranks an error
            file_id = batch.get(field)
            if file_id:
                for line in (await self._text("GET", f"/files/{file_id}/content")).splitlines():
                    if line.strip():
                        key, answer = read_line(line)
                        answers[key] = answer
        return answers

    async def _text(self, method: str, path: str, **options: Any) -> str:
        url = f"{self.base_url}{path}"
        try:
            async with self._session().request(method, url, **options) as response:
                text = await response.text()
                if response.status >= 400:
                    raise status_error(response.status, text, response.headers)
                return text
        except (TimeoutError, aiohttp.ClientError) as error:
            message = f"{type(error).__name__} calling {method} {url}: {error}"
            raise ProviderError(message, retryable=True) from None

    async def _call(self, method: str, path: str, **options: Any) -> dict[str, Any]:
        text = await self._text(method, path, **options)
        try:
            answer = json.loads(text)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            url = f"{self.base_url}{path}"
            raise ProviderError(f"malformed answer from {url}: {text[:200]}", retryable=True)
        return answer


def read_line(text: str) -> tuple[str, dict[str, Any] | ProviderError]:
    """One line of an output or error file: its key, and the completion or why there is none."""
    line = json.loads(text)
    key = str(line["custom_id"])
    response = line.get("response")
    if response and response.get("status_code") == 200:
        return key, dict(response["body"])
    if response:
        status = int(response.get("status_code") or 0)
        body = json.dumps(response.get("body"))[:500]
        return key, line_failure(f"HTTP {status} in batch: {body}", status)
    error = line.get("error") or {}
    return key, line_failure(f"{error.get('code')}: {error.get('message')}")
