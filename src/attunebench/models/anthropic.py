"""`anthropic/<model>`: Claude models through the official anthropic SDK, imported on first use.

The SDK's retries are off (the engine retries for every provider alike), and everything but
the model, the budget and the messages travels as extra body fields, since recent SDKs no
longer take sampling parameters as arguments. The API version sent is `API_VERSION` (option
`api_version`): from `2026-10-21` no model takes a temperature. What a model takes is read
from Anthropic's models endpoint at the pre-flight (`claude_models.describe`), else the
capability table. Every request states its thinking (`claude_models.thinking_fields`), and
calls are paced by the account's output-token rate limit (`claude_models.OutputPacer`), since
Anthropic reserves `max_tokens` when a request starts."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar, Unpack

from attunebench.answerform import TaskHint
from attunebench.models.anthropic_batch import AnthropicBatches
from attunebench.models.base import (
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    ProviderError,
)
from attunebench.models.batching import request_key
from attunebench.models.capabilities import (
    CLAUDE_MODELS,
    UNKNOWN_CLAUDE,
    Capabilities,
    family,
    overridden,
)
from attunebench.models.claude_models import (
    THINKING_OFF,
    OutputPacer,
    call_timeout,
    describe,
    needs_streaming,
    over_output_limit,
    over_rate_limit,
    pacing_note,
    thinking_fields,
    thinking_note,
    told_by,
    unasked_thinking,
)
from attunebench.models.hosted import DEFAULT_TIMEOUT_S, BatchMode, HostedOptions, checked
from attunebench.models.http_errors import status_error
from attunebench.models.openai_wire import resolve_api_key
from attunebench.models.preflight import (
    ADAPTABLE,
    PREFLIGHT_HEADER,
    PROBE_MESSAGES,
    RENAMES,
    Adapting,
    adapt,
    probe_params,
)
from attunebench.models.registry import PROVIDERS, ProviderConfigError

T = TypeVar("T")
# What the SDK takes as arguments; the rest of a request body goes as extra body fields.
SDK_ARGUMENTS = ("model", "max_tokens", "messages")
API_VERSION = "2023-06-01"
API_URL = "https://api.anthropic.com"
NO_SAMPLING_FROM = "2026-10-21"  # the API version from which no model takes sampling
# The Messages API requires `max_tokens`: never renamed, unlike OpenAI's budget field.
ADAPTS = {name: action for name, action in ADAPTABLE.items() if name not in RENAMES}
THINKING_ADAPTED = "disabled refused: adaptive stated"
FIXES = {
    "temperature": "set sampling = false (it leaves temperature and top_p out)",
    "top_p": "set sampling = false (it leaves temperature and top_p out)",
    "thinking": 'use params.thinking = "adaptive" with params.effort in place of '
    "thinking_budget, or the other way round, as the model takes; or remove thinking",
    "output_config": "remove params.effort, or set one the model takes",
    "max_tokens": "lower params.max_tokens (with thinking the request asks for max_tokens "
    "plus the thinking budget or allowance)",
    "stop_sequences": "remove stop from params",
}


@PROVIDERS.register("anthropic")
class AnthropicProvider(Adapting, BatchMode, NamedProvider):
    adaptable = ADAPTS

    def __init__(
        self, model: str, *, api_version: str = API_VERSION, **options: Unpack[HostedOptions]
    ) -> None:
        checked(type(self).__name__, options)
        try:
            import anthropic
        except ImportError:
            raise ProviderConfigError(
                "anthropic/ models need the anthropic package: pip install 'attunebench[anthropic]'"
            ) from None
        super().__init__(f"anthropic/{model}")
        self.model = model
        base_urls = options.get("base_urls")
        self.base_url = options.get("base_url") or (base_urls[0] if base_urls else None)
        server = [self.base_url or API_URL]
        # A local stand-in server takes any key.
        key_env = options.get("api_key_env", "ANTHROPIC_API_KEY")
        key = resolve_api_key(self.spec, options.get("api_key"), key_env, server) or "no-key"
        self._override = dict(options.get("capabilities") or {})
        sampling = options.get("sampling")
        if sampling is not None:
            self._override["sampling"] = sampling
        elif api_version >= NO_SAMPLING_FROM:
            self._override.setdefault("sampling", False)
        self.capabilities: Capabilities = overridden(model, self._table_entry(), self._override)
        self._adapted: dict[str, str] = {}
        self._timeout_s = timeout_s = options.get("timeout_s", DEFAULT_TIMEOUT_S)
        self._pacer = OutputPacer()
        self._call_tokens = 0  # the largest budget a call of this run asks (the pre-flight's)
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,
            timeout=timeout_s,
            default_headers={"anthropic-version": api_version},
        )
        if options.get("batch"):
            self.batch_through(AnthropicBatches(self._client, self._calling), self.spec, options)

    def _table_entry(self) -> Capabilities:
        return CLAUDE_MODELS.get(family(self.model), UNKNOWN_CLAUDE)

    @property
    def endpoint(self) -> str:
        return self.batch_endpoint(self.base_url or API_URL)

    def _accepted(self) -> Capabilities:
        """The capabilities, less a thinking-off type the pre-flight found refused."""
        caps = self.capabilities
        if self._adapted.get("thinking") == THINKING_ADAPTED:
            kept = tuple(kind for kind in caps.thinking if kind not in THINKING_OFF)
            return caps.model_copy(update={"thinking": kept})
        return caps

    def cache_identity(self) -> dict[str, Any]:
        # A call that asks no thinking states `disabled` or the thinking it cannot avoid, and
        # each gives other answers (those of calls that left `thinking` out are not reused).
        return {"unasked_thinking": unasked_thinking(self._accepted())}

    def request(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        """The Messages API body for these messages and parameters, as the model takes them."""
        if params.reasoning_effort is not None:
            raise ProviderError(
                "params.reasoning_effort is for OpenAI's reasoning models; anthropic/ models "
                "think with params.thinking (or thinking_budget) and params.effort",
                retryable=False,
            )
        caps = self._accepted()
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        thinking, allowance = thinking_fields(caps, params, self.spec)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": params.max_tokens + allowance,
            "messages": [m.to_dict() for m in messages if m.role != "system"],
            **thinking,
        }
        if system:
            request["system"] = system
        thinks = thinking.get("thinking", {}).get("type", "disabled") != "disabled"
        if caps.sampling and not thinks:
            request["temperature"] = params.temperature
            if params.top_p is not None:
                request["top_p"] = params.top_p
        if params.stop and caps.stop:
            request["stop_sequences"] = list(params.stop)
        request.update(params.extra)
        return adapt(request, self._adapted)

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
        """One Messages call, paced by the output-token rate limit, its headers read; streamed
        when it may take longer than the SDK lets a call go unstreamed (`needs_streaming`)."""
        arguments = {name: body[name] for name in SDK_ARGUMENTS}
        extra = {name: value for name, value in body.items() if name not in SDK_ARGUMENTS}
        timeout = call_timeout(self._timeout_s, body["max_tokens"])
        ticket = await self._pacer.reserve(body["max_tokens"])
        answered: Mapping[str, str] = {}
        try:
            if needs_streaming(body["max_tokens"]):
                message, answered = await self._calling(
                    self._streamed(arguments, extra, headers, timeout)
                )
                return message
            raw = await self._calling(
                self._client.messages.with_raw_response.create(
                    **arguments, extra_body=extra, extra_headers=headers, timeout=timeout
                )
            )
            answered = raw.headers
        except ProviderError as error:
            answered = error.headers
            raise
        finally:
            self._pacer.settle(ticket, answered)
        return await raw.parse()

    async def _streamed(
        self,
        arguments: dict[str, Any],
        extra: dict[str, Any],
        headers: dict[str, str] | None,
        timeout: float,
    ) -> tuple[Any, Mapping[str, str]]:
        """A long call, streamed (the SDK refuses one that may pass 10 minutes unstreamed,
        and a connection held silent that long may be cut): its message and headers."""
        async with self._client.messages.stream(
            **arguments, extra_body=extra, extra_headers=headers, timeout=timeout
        ) as stream:
            return await stream.get_final_message(), stream.response.headers

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

    async def _describe(self) -> None:
        """The model as the models endpoint describes it, over the table's (or the table alone)."""
        try:
            info = await self._calling(self._client.models.retrieve(self.model))
        except ProviderError:
            return  # no such endpoint (a proxy, an older server), or no such model there
        described = describe(info.model_dump(mode="json"), self._table_entry())
        if described is not None:
            self.capabilities = overridden(self.model, described, self._override)

    async def probe(self, params: GenerateParams, *, choice: bool = False) -> None:
        """Read the model's description, then one live call with its parameters; a refusal
        is adapted, or stops the run with the fix (see `preflight`), as does a budget over
        the model's output limit or over a minute of the account's output tokens."""
        await self._describe()
        if self.capabilities.lifecycle == "retired":  # as the endpoint, or else the table, says
            where = told_by(self.capabilities)
            raise ProviderConfigError(
                f"{self.spec} is retired ({where}): requests naming it fail; choose another model"
            )
        small = probe_params(params)

        async def send(body: dict[str, Any]) -> None:
            await self._create(body, headers={PREFLIGHT_HEADER: "1"})

        await self.preflight(
            lambda: self.request(list(PROBE_MESSAGES), small),
            send,
            fixes=FIXES,
            params=small,
        )
        self._call_tokens = self.request(list(PROBE_MESSAGES), params)["max_tokens"]
        self._check_budget(params)

    def adopt(self, found: Mapping[str, Any], params: GenerateParams) -> None:
        super().adopt(found, params)
        self._call_tokens = self.request(list(PROBE_MESSAGES), params)["max_tokens"]

    def thinking_note(self, params: GenerateParams) -> str | None:
        return thinking_note(self._accepted(), params)

    def call_budget(self, params: GenerateParams) -> int:
        try:
            return params.max_tokens + thinking_fields(self._accepted(), params, self.spec)[1]
        except ProviderError:  # a parameter it does not take: the pre-flight stops the run
            return params.max_tokens

    def _adaptation(self, parameter: str | None, params: GenerateParams) -> str | None:
        # A `disabled` thinking the provider stated on its own, refused: the model always
        # thinks, whatever its description said; it is asked for adaptive thinking instead.
        if parameter == "thinking":
            asked = params.thinking or params.thinking_budget or "thinking" in params.extra
            stated = unasked_thinking(self._accepted()) in ("disabled", "between_tools")
            return THINKING_ADAPTED if stated and not asked else None
        return super()._adaptation(parameter, params)

    def _check_budget(self, params: GenerateParams) -> None:
        """Stop the run, before any item, for a call that cannot be served as configured."""
        over = over_output_limit(self.capabilities, self._call_tokens, params.max_tokens)
        if over is None and self._batches is None:  # batches are not paced by it
            over = over_rate_limit(self._pacer.limit, self._call_tokens, params.max_tokens)
        if over is not None:
            raise ProviderConfigError(f"{self.spec}: {over}")

    def rate_note(self, concurrency: int) -> str | None:
        if self._batches is not None:
            return None
        return pacing_note(self._pacer.limit, self._call_tokens, concurrency)

    async def aclose(self) -> None:
        await self.close_batches()
        await self._client.close()


def message_output(reply: Any, latency_s: float, *, batched: bool = False) -> ModelOutput:
    """A ModelOutput from a Messages API reply: the text blocks are the answer; thinking
    blocks are kept apart (a redacted one as a marker: its content is encrypted; an omitted
    one, `display: "omitted"`, has no text)."""
    text, thinking = [], []
    for block in reply.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "thinking" and block.thinking:
            thinking.append(block.thinking)
        elif block.type == "redacted_thinking":
            thinking.append("[redacted thinking]")
    usage = reply.usage
    cached = getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    creation = getattr(usage, "cache_creation", None)
    hour = int(getattr(creation, "ephemeral_1h_input_tokens", 0) or 0)
    details = getattr(usage, "output_tokens_details", None)
    return ModelOutput(
        text="".join(text),
        input_tokens=usage.input_tokens + cached + written,  # input_tokens leaves the cache out
        output_tokens=usage.output_tokens,
        reasoning_tokens=int(getattr(details, "thinking_tokens", 0) or 0),
        cached_input_tokens=cached,
        cache_write_tokens=written,
        cache_write_1h_tokens=min(hour, written),
        latency_s=latency_s,
        finish_reason=reply.stop_reason,
        raw={"id": reply.id, "model": reply.model},
        thinking="\n\n".join(thinking) or None,
        batched=batched,
    )
