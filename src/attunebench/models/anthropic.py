"""`anthropic/<model>`: Claude models through the official anthropic SDK, imported on first use.

The SDK's own retries are switched off: the engine retries, with one policy for every provider.
System messages go in the request's `system` field, as the Messages API wants. Recent SDKs no
longer take sampling parameters as arguments, so everything but the model, the budget and the
messages travels as extra body fields.

The provider sends the API version it was written for (`API_VERSION`, the option
`api_version` to change it), whatever the SDK's default: from `2026-10-21` no model takes a
temperature, so the version is part of what a model accepts. What each model takes comes from
its capability table (`models.capabilities`): sampling parameters only where it accepts
them; `params.thinking_budget` (`thinking.type = "enabled"`) for the models that take it,
`params.thinking = "adaptive"` and `params.effort` (`output_config.effort`) for the newer
ones. Thinking counts against `max_tokens`, so the request's budget is the answer's budget
plus the thinking budget, or plus the model's thinking allowance for adaptive thinking and
for models that think by default; a reply cut off there (`stop_reason: "max_tokens"`) is
counted per model in the closing summary. Thinking text is kept apart from the answer
(`ModelOutput.thinking`), never parsed; its tokens (`output_tokens_details.thinking_tokens`)
are reasoning tokens, billed as output. Cache reads count as cached input. With
`batch = true` calls go through Message Batches (`anthropic_batch`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from attunebench.models.anthropic_batch import LIMITS, AnthropicBatches
from attunebench.models.base import (
    GenerateParams,
    Message,
    ModelOutput,
    Provider,
    ProviderError,
)
from attunebench.models.batched import BatchMode
from attunebench.models.batching import BatchQueue, BatchTiming, request_key
from attunebench.models.capabilities import (
    CLAUDE_MODELS,
    UNKNOWN_CLAUDE,
    Capabilities,
    capabilities_of,
)
from attunebench.models.hints import TaskHint
from attunebench.models.http_errors import status_error
from attunebench.models.openai_wire import is_local
from attunebench.models.preflight import (
    PREFLIGHT_HEADER,
    PROBE_MESSAGES,
    Adapting,
    adapt,
    probe_params,
)
from attunebench.models.registry import PROVIDERS, ProviderConfigError

T = TypeVar("T")
# What the SDK takes as arguments; the rest of a request body goes as extra body fields.
SDK_ARGUMENTS = ("model", "max_tokens", "messages")
API_VERSION = "2023-06-01"
NO_SAMPLING_FROM = "2026-10-21"  # the API version from which no model takes sampling
FIXES = {
    "temperature": "set sampling = false (it leaves temperature and top_p out)",
    "top_p": "set sampling = false (it leaves temperature and top_p out)",
    "thinking": 'use params.thinking = "adaptive" with params.effort in place of '
    "thinking_budget, or the other way round, as the model takes; or remove thinking",
    "output_config": "remove params.effort (this model takes no effort)",
    "max_tokens": "lower params.max_tokens (with thinking the request asks for max_tokens "
    "plus the thinking budget or allowance)",
    "stop_sequences": "remove stop from params",
}


class AnthropicProvider(Adapting, BatchMode, Provider):
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
        capabilities: dict[str, Any] | None = None,
        api_version: str = API_VERSION,
        batch: bool = False,
        batch_size: int | None = None,
        batch_tokens: int | None = None,
        batch_poll_s: float = BatchTiming.poll_s,
        batch_quiet_s: float = BatchTiming.quiet_s,
        batch_wait_s: float = BatchTiming.wait_s,
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
        override = dict(capabilities or {})
        if sampling is not None:
            override["sampling"] = sampling
        elif api_version >= NO_SAMPLING_FROM:
            override.setdefault("sampling", False)
        self.capabilities: Capabilities = capabilities_of(
            model, CLAUDE_MODELS, UNKNOWN_CLAUDE, override
        )
        self._adapted: dict[str, str] = {}
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,
            timeout=timeout_s,
            default_headers={"anthropic-version": api_version},
        )
        self._batches: BatchQueue[Any] | None = None
        if batch:
            limits = dataclasses.replace(
                LIMITS, max_requests=batch_size or LIMITS.max_requests, max_tokens=batch_tokens
            )
            api = AnthropicBatches(self._client, self._calling, limits)
            timing = BatchTiming(quiet_s=batch_quiet_s, wait_s=batch_wait_s, poll_s=batch_poll_s)
            self._batches = BatchQueue(api, self.spec, timing)

    @property
    def spec(self) -> str:
        return f"anthropic/{self.model}"

    @property
    def endpoint(self) -> str:
        server = self.base_url or "https://api.anthropic.com"
        return self.batch_endpoint(server)

    def request(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        """The Messages API body for these messages and parameters, as the model takes them."""
        if params.reasoning_effort is not None:
            raise ProviderError(
                "params.reasoning_effort is for OpenAI's reasoning models; anthropic/ models "
                "think with params.thinking (or thinking_budget) and params.effort",
                retryable=False,
            )
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        thinking: dict[str, Any] = {}
        allowance = self._thinking(params, thinking)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": params.max_tokens + allowance,
            "messages": [m.to_dict() for m in messages if m.role != "system"],
            **thinking,
        }
        if system:
            request["system"] = system
        if self.capabilities.sampling and "thinking" not in request:
            request["temperature"] = params.temperature
            if params.top_p is not None:
                request["top_p"] = params.top_p
        if params.stop and self.capabilities.stop:
            request["stop_sequences"] = list(params.stop)
        request.update(params.extra)
        return adapt(request, self._adapted)

    def _thinking(self, params: GenerateParams, fields: dict[str, Any]) -> int:
        """Put the thinking and effort fields in `fields`; the tokens thinking may take."""
        caps, refused = self.capabilities, None
        if params.thinking_budget is not None and "enabled" not in caps.thinking:
            refused = 'params.thinking_budget; use params.thinking = "adaptive"'
        elif params.thinking == "adaptive" and "adaptive" not in caps.thinking:
            refused = 'params.thinking = "adaptive"; use params.thinking_budget'
        elif params.effort is not None and params.effort not in caps.efforts:
            takes = ", ".join(caps.efforts) or "none"
            refused = f"params.effort {params.effort!r} (it takes: {takes})"
        if refused is not None:
            raise ProviderError(f"{self.spec} does not take {refused}", retryable=False)
        if params.effort is not None:
            fields["output_config"] = {"effort": params.effort}
        if params.thinking_budget is not None:
            fields["thinking"] = {"type": "enabled", "budget_tokens": params.thinking_budget}
            return params.thinking_budget
        if params.thinking == "adaptive":
            fields["thinking"] = {"type": "adaptive"}
        thinks = params.thinking is not None or caps.thinks_by_default
        return caps.thinking_allowance if thinks else 0

    async def _calling(self, call: Awaitable[T]) -> T:
        """Await an SDK call, its errors as ProviderError."""
        sdk = self._sdk
        try:
            return await call
        except sdk.APIStatusError as error:
            body = error.body if isinstance(error.body, dict) else str(error)
            raise status_error(error.status_code, body, error.response.headers) from None
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

    async def probe(self, params: GenerateParams, *, choice: bool = False) -> None:
        """One live call with the model's parameters; a refusal is adapted, or stops the run
        with the fix (see `preflight`)."""
        params = probe_params(params)

        async def send(body: dict[str, Any]) -> None:
            await self._create(body, headers={PREFLIGHT_HEADER: "1"})

        await self.preflight(
            lambda: self.request(list(PROBE_MESSAGES), params),
            send,
            spec=self.spec,
            fixes=FIXES,
            params=params,
        )

    async def aclose(self) -> None:
        await self.close_batches()
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
    usage = reply.usage
    cached = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    details = getattr(usage, "output_tokens_details", None)
    return ModelOutput(
        text="".join(text),
        input_tokens=usage.input_tokens + cached + written,  # input_tokens leaves the cache out
        output_tokens=usage.output_tokens,
        reasoning_tokens=int(getattr(details, "thinking_tokens", 0) or 0),
        cached_input_tokens=cached,
        latency_s=latency_s,
        finish_reason=reply.stop_reason,
        raw={"id": reply.id, "model": reply.model},
        thinking="\n\n".join(thinking) or None,
        batched=batched,
    )


@PROVIDERS.register("anthropic")
def make_anthropic(model: str, **options: Any) -> AnthropicProvider:
    return AnthropicProvider(model, **options)
