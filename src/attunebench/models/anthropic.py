"""`anthropic/<model>`: Claude models through the official anthropic SDK, imported on first use.

The SDK's own retries are switched off: the engine retries, with one policy for every provider.
System messages go in the request's `system` field, as the Messages API wants. Recent SDKs no
longer take sampling parameters as arguments, so everything but the model, the budget and the
messages travels as extra body fields (`sampling = false` leaves temperature and top_p out,
for models that refuse them).

Extended thinking: `params.thinking_budget` asks for `thinking` with that budget. The request's
`max_tokens` is then the answer's budget plus the thinking budget (the API counts thinking
against it), and temperature and top_p are left out (the API refuses them with thinking). The
thinking text is kept apart from the answer (`ModelOutput.thinking`), never parsed; its
tokens are output tokens, billed and priced as such. With `batch = true` calls go through
Message Batches (`anthropic_batch`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

from attunebench.models.anthropic_batch import LIMITS, AnthropicBatches
from attunebench.models.base import (
    BatchCounts,
    GenerateParams,
    Message,
    ModelOutput,
    Provider,
    ProviderError,
)
from attunebench.models.batch_journal import JOURNAL_FILE
from attunebench.models.batching import BatchQueue, request_key
from attunebench.models.hints import TaskHint
from attunebench.models.http_errors import status_error
from attunebench.models.openai_compat import is_local
from attunebench.models.preflight import PREFLIGHT_HEADER, PROBE_MESSAGES, probe_params, refusal
from attunebench.models.registry import PROVIDERS, ProviderConfigError

T = TypeVar("T")
# What the SDK takes as arguments; the rest of a request body goes as extra body fields.
SDK_ARGUMENTS = ("model", "max_tokens", "messages")
FIXES = {
    "temperature": "set sampling = false (it leaves temperature and top_p out)",
    "top_p": "set sampling = false (it leaves temperature and top_p out)",
    "thinking": "set params.thinking_budget to 1024 or more, or remove it (a model that "
    "cannot think)",
    "max_tokens": "lower params.max_tokens (with thinking the request asks for max_tokens "
    "plus thinking_budget)",
    "stop_sequences": "remove stop from params",
}


class AnthropicProvider(Provider):
    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        base_urls: list[str] | tuple[str, ...] | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        api_key: str | None = None,
        timeout_s: float = 120.0,
        sampling: bool | None = None,
        batch: bool = False,
        batch_size: int | None = None,
        batch_poll_s: float = 30.0,
        batch_quiet_s: float = 2.0,
        batch_wait_s: float = 60.0,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise ProviderConfigError(
                "anthropic/ models need the anthropic package: pip install 'attunebench[anthropic]'"
            ) from None
        self.model = model
        self.base_url = base_url or (base_urls[0] if base_urls else None)
        key = api_key if api_key is not None else os.environ.get(api_key_env)
        if not key:
            if self.base_url is None or not is_local(self.base_url):
                raise ProviderConfigError(
                    f"anthropic/{model}: environment variable {api_key_env} is not set"
                )
            key = "no-key"  # a local stand-in server takes any key
        self.sampling = True if sampling is None else sampling
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=timeout_s
        )
        self._batches: BatchQueue[Any] | None = None
        if batch:
            limits = LIMITS
            if batch_size is not None:
                limits = dataclasses.replace(limits, max_requests=batch_size)
            api = AnthropicBatches(self._client, self._calling, limits)
            self._batches = BatchQueue(
                api, self.spec, quiet_s=batch_quiet_s, wait_s=batch_wait_s, poll_s=batch_poll_s
            )

    @property
    def spec(self) -> str:
        return f"anthropic/{self.model}"

    @property
    def endpoint(self) -> str:
        server = self.base_url or "https://api.anthropic.com"
        return f"batch {server}" if self._batches is not None else server

    def attach(self, rundir: Path) -> None:
        if self._batches is not None:
            self._batches.attach(rundir / JOURNAL_FILE)

    def batch_counts(self) -> BatchCounts | None:
        return self._batches.counts() if self._batches is not None else None

    def request(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        """The Messages API body for these messages and parameters."""
        if params.reasoning_effort is not None:
            raise ProviderError(
                "params.reasoning_effort is for OpenAI's reasoning models; anthropic/ models "
                "think with params.thinking_budget",
                retryable=False,
            )
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        thinking = params.thinking_budget
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": params.max_tokens + (thinking or 0),
            "messages": [m.to_dict() for m in messages if m.role != "system"],
        }
        if system:
            request["system"] = system
        if thinking is not None:
            request["thinking"] = {"type": "enabled", "budget_tokens": thinking}
        elif self.sampling:
            request["temperature"] = params.temperature
            if params.top_p is not None:
                request["top_p"] = params.top_p
        if params.stop:
            request["stop_sequences"] = list(params.stop)
        request.update(params.extra)
        return request

    async def _calling(self, call: Awaitable[T]) -> T:
        """Await an SDK call, its errors as ProviderError."""
        sdk = self._sdk
        try:
            return await call
        except sdk.APIStatusError as error:
            headers = error.response.headers
            raise status_error(error.status_code, str(error), headers.get("retry-after")) from None
        except sdk.APIConnectionError as error:  # includes timeouts
            raise ProviderError(f"{type(error).__name__}: {error}", retryable=True) from None

    async def _create(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
        arguments = {name: body[name] for name in SDK_ARGUMENTS}
        extra = {name: value for name, value in body.items() if name not in SDK_ARGUMENTS}
        return await self._calling(
            self._client.messages.create(**arguments, extra_body=extra, extra_headers=headers)
        )

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        started = time.perf_counter()
        body = self.request(messages, params)
        if self._batches is not None:
            reply = await self._batches.request(request_key(body), body)
            return message_output(reply, time.perf_counter() - started, batched=True)
        reply = await self._create(body)
        return message_output(reply, time.perf_counter() - started)

    async def probe(self, params: GenerateParams) -> None:
        """One live call with the model's parameters; a refusal stops the run with the fix."""
        params = probe_params(params)
        sent: dict[str, Any] = {}
        try:
            sent = self.request(list(PROBE_MESSAGES), params)
            await self._create(sent, headers={PREFLIGHT_HEADER: "1"})
        except ProviderError as error:
            refused = refusal(self.spec, error, sent=sent, fixes=FIXES, params=params)
            if refused is not None:
                raise refused from None

    async def aclose(self) -> None:
        if self._batches is not None:
            await self._batches.aclose()
        await self._client.close()


def message_output(reply: Any, latency_s: float, *, batched: bool = False) -> ModelOutput:
    """A ModelOutput from a Messages API reply: the text blocks are the answer; thinking
    blocks are kept apart (a redacted one as a marker: its content is encrypted)."""
    text, thinking = [], []
    for block in reply.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "thinking":
            thinking.append(block.thinking)
        elif block.type == "redacted_thinking":
            thinking.append("[redacted thinking]")
    return ModelOutput(
        text="".join(text),
        input_tokens=reply.usage.input_tokens,
        output_tokens=reply.usage.output_tokens,
        latency_s=latency_s,
        finish_reason=reply.stop_reason,
        raw={"id": reply.id, "model": reply.model},
        thinking="\n\n".join(thinking) or None,
        batched=batched,
    )


@PROVIDERS.register("anthropic")
def make_anthropic(model: str, **options: Any) -> AnthropicProvider:
    return AnthropicProvider(model, **options)
