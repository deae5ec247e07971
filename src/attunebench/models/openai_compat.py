"""`openai/<model>`: any server that speaks OpenAI's /v1/chat/completions (OpenAI, vLLM, SGLang,
llama.cpp, Ollama, OpenRouter), by base URL, over aiohttp.

aiohttp, not the openai SDK: at concurrency 64 it sustains about three times the calls per
second on a small machine. Several base URLs (replicas) are used round-robin. What a model
accepts comes from its capability table (`models.capabilities`) under the entry's
`capabilities`; where the table is silent, `api` says which budget field is sent. One body
builder (`request_body`) serves generate and choice calls, live or batched, so `params.extra`,
`seed` and `reasoning_effort` reach both. With `json_schema = true` a task's answer schema is
sent as `response_format`: a constrained answer, recorded in run.json and the cache identity,
and a server that refuses it stops the run at the pre-flight."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Unpack
from urllib.parse import urlsplit

import aiohttp

from attunebench.answerform import TaskHint
from attunebench.models.base import (
    ChoiceOutput,
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    ProviderError,
)
from attunebench.models.batching import request_key
from attunebench.models.capabilities import (
    OPENAI_MODELS,
    Capabilities,
    at_effort,
    family,
    overridden,
    unknown_openai,
)
from attunebench.models.choice import prefilled
from attunebench.models.hosted import DEFAULT_TIMEOUT_S, BatchMode, HostedOptions, checked
from attunebench.models.http_errors import body_line, looks_like_html, status_error
from attunebench.models.openai_batch import OpenAIBatches, enqueued_tokens
from attunebench.models.openai_wire import (
    PROBE_SCHEMA,
    TOP_LOGPROBS,
    Api,
    choice_body,
    completion_body,
    completion_output,
    default_api,
    parse_choice,
    parse_completion,
    resolve_api_key,
    resolve_base_urls,
    schema_format,
)
from attunebench.models.preflight import (
    NOT_AN_API,
    PREFLIGHT_HEADER,
    PROBE_MESSAGES,
    Adapting,
    adapt,
    probe_params,
)
from attunebench.models.registry import PROVIDERS, ProviderConfigError

# What fixes a refusal the pre-flight cannot adapt, said in its one line.
FIXES = {
    "max_tokens": 'set api = "openai" (it sends max_completion_tokens)',
    "max_completion_tokens": 'set api = "compatible" (it sends max_tokens)',
    "temperature": "set sampling = false (it leaves temperature and top_p out)",
    "top_p": "set sampling = false (it leaves temperature and top_p out)",
    "reasoning_effort": "remove reasoning_effort from params, or set it to a value the model takes",
    "response_format": "set options = { json_mode = false }",
    "seed": "remove seed from params",
    "stop": "remove stop from params",
    "logprobs": 'set answer = "generate" (this model gives no logprobs for choice mode)',
    "top_logprobs": 'set answer = "generate" (this model gives no logprobs for choice mode)',
}
PROBE_KEYS = ("A", "B")
NO_SCHEMA_FIX = "set json_schema = false (this server takes no JSON schema)"


@PROVIDERS.register("openai")
class OpenAICompatProvider(Adapting, BatchMode, NamedProvider):
    """Chat completions over aiohttp; see the module docstring."""

    # Whether its server continues a final assistant message, so a choice question can put
    # the answer's opening in the model's own turn (`choice.prefilled`). Hosted APIs start a
    # new turn instead, so it is off unless a provider knows its server (llama.cpp's does).
    choice_prefill = False

    def __init__(
        self,
        model: str,
        *,
        json_mode: bool = True,
        json_schema: bool = False,
        chat: bool = True,
        max_connections: int = 0,
        api: Api | None = None,
        **options: Unpack[HostedOptions],
    ) -> None:
        checked(type(self).__name__, options)
        super().__init__(f"openai/{model}")
        self.model = model
        # False: a model with no chat template, asked through /completions with plain text.
        self.chat = chat
        try:
            self.base_urls = resolve_base_urls(options.get("base_url"), options.get("base_urls"))
        except ValueError as error:
            raise ProviderConfigError(f"{self.spec}: {error}") from None
        self.api: Api = api or default_api(self.base_urls)
        self.capabilities: Capabilities = self._capabilities(
            options.get("capabilities"), options.get("sampling")
        )
        self._adapted: dict[str, str] = {}
        # A model without first-token logprobs (a reasoning model) has no choice mode; one
        # that gives them at its default effort (GPT-5.1 and later at `none`) has.
        choosing = at_effort(self.capabilities, None, self._told).logprobs or not chat
        self.answer_modes = frozenset({"generate", "choice"} if choosing else {"generate"})
        key_env = options.get("api_key_env", "OPENAI_API_KEY")
        key = resolve_api_key(f"openai/{model}", options.get("api_key"), key_env, self.base_urls)
        self._headers = {"Content-Type": "application/json"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self.json_mode = json_mode  # whether the server honours response_format json_object
        self.json_schema = json_schema  # whether to send each task's answer schema
        if json_schema and not chat:
            raise ProviderConfigError(f"{self.spec}: json_schema = true needs chat completions")
        self._timeout = aiohttp.ClientTimeout(total=options.get("timeout_s", DEFAULT_TIMEOUT_S))
        self._max_connections = max_connections  # 0: as many as the engine's limit lets through
        self._session: aiohttp.ClientSession | None = None
        self._next_url = 0
        if options.get("batch"):
            if not chat:
                raise ProviderConfigError(f"{self.spec}: batch = true needs chat completions")
            # The enqueued-token budget: input tokens in running batches at once. OpenAI's
            # limit is per model and usage tier (Settings > Limits); by default the model's
            # tier-1 limit (`openai_batch.ENQUEUED_TOKENS`). Set yours to go faster.
            batches = OpenAIBatches(self.base_urls[0], self._client)
            self.batch_through(batches, self.spec, options, enqueued_tokens(model))

    def _capabilities(self, override: Any, sampling: bool | None) -> Capabilities:
        """The table's entry (or the server's guess), with the entry's `capabilities` over it."""
        default = unknown_openai(hosted=default_api(self.base_urls) == "openai")
        told = dict(override or {})
        if sampling is not None:
            told["sampling"] = sampling
        self._told = frozenset(told)
        found = overridden(self.model, OPENAI_MODELS.get(family(self.model), default), told)
        if self.chat and not found.chat:
            raise ProviderConfigError(
                f"{self.spec} is served only by OpenAI's Responses API, not chat completions"
            )
        return found

    @property
    def endpoint(self) -> str:
        return self.batch_endpoint(" ".join(self.base_urls))

    def _client(self) -> aiohttp.ClientSession:
        # Made on first use: a session belongs to the event loop that is running the calls.
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._max_connections, limit_per_host=0)
            # No cookie jar: an API call carries its key, and filtering cookies per request
            # is pure cost.
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=self._timeout,
                headers=self._headers,
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    def mode_reason(self, mode: str) -> str:
        if mode == "choice" and "choice" not in self.answer_modes:
            return (
                f"{self.spec} gives no first-token logprobs (capabilities.logprobs = false, "
                "as for reasoning models), so choice mode does not apply"
            )
        return super().mode_reason(mode)

    def request_body(
        self,
        messages: Sequence[Message],
        params: GenerateParams,
        *,
        choice: bool = False,
        schema: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The body of a generate call, or (`choice`) of a choice call: one token's logprobs."""
        claude = [
            name for name in ("thinking_budget", "thinking", "effort") if getattr(params, name)
        ]
        if claude:
            raise ProviderError(
                f"params.{claude[0]} is for anthropic/ models; OpenAI's reasoning models "
                "take params.reasoning_effort",
                retryable=False,
            )
        caps = at_effort(self.capabilities, params.reasoning_effort, self._told)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [message.to_dict() for message in messages],
        }
        if caps.sampling:
            body["temperature"] = params.temperature
            if params.top_p is not None:
                body["top_p"] = params.top_p
        budget = caps.token_field or (
            "max_completion_tokens" if self.api == "openai" else "max_tokens"
        )
        body[budget] = 1 if choice else params.max_tokens
        effort = params.reasoning_effort
        if effort is not None:
            if caps.efforts and effort not in caps.efforts:
                raise ProviderError(
                    f"reasoning_effort {effort!r} is not one {self.spec} takes "
                    f"({', '.join(caps.efforts)}); set params.reasoning_effort to one of them",
                    retryable=False,
                )
            body["reasoning_effort"] = effort
        if params.seed is not None and caps.seed:
            body["seed"] = params.seed
        if params.stop and caps.stop:
            body["stop"] = list(params.stop)
        if choice:
            body["logprobs"] = True
            body["top_logprobs"] = TOP_LOGPROBS
        elif schema is not None and self.json_schema:
            body["response_format"] = schema_format(schema)
        elif params.json_mode and self.json_mode:
            body["response_format"] = {"type": "json_object"}
        body.update(params.extra)
        return adapt(body, self._adapted)

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        started = time.perf_counter()
        if not self.chat:
            answer = await self._post("completions", completion_body(self.model, messages, params))
            return parse_completion(answer, time.perf_counter() - started)
        body = self.request_body(messages, params, schema=None if hint is None else hint.schema())
        if self._batches is not None:
            completion = await self._batches.request(request_key(body), body)
            output = completion_output(completion, time.perf_counter() - started)
            return dataclasses.replace(output, batched=True)
        answer = await self._post("chat/completions", body)
        return parse_completion(answer, time.perf_counter() - started)

    async def stream(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> AsyncIterator[str]:
        """The reply as the server writes it (server-sent events, to `data: [DONE]`), for the
        collection app; a completions-API or batched model's comes whole."""
        if not self.chat or self._batches is not None:
            yield (await self.generate(messages, params, hint)).text
            return
        body = self.request_body(messages, params, schema=None if hint is None else hint.schema())
        async with self._posting("chat/completions", {**body, "stream": True}) as response:
            async for line in response.content:
                piece = _delta(line)
                if piece is None:
                    return
                if piece:
                    yield piece

    async def probe(self, params: GenerateParams, *, choice: bool = False) -> None:
        """One live chat call with the model's parameters, and one with its choice body."""
        if not self.chat:
            return
        params = probe_params(params)
        messages = list(PROBE_MESSAGES)
        headers = {PREFLIGHT_HEADER: "1"}

        async def send(body: dict[str, Any]) -> None:
            try:
                await self._post("chat/completions", body, headers=headers)
            except ProviderError as error:
                raise self._not_an_api(error) from None

        async def send_choice(body: dict[str, Any]) -> None:
            # Accepted is not enough: the answer must carry the logprobs choice mode reads.
            parse_choice(await self._post("chat/completions", body, headers=headers), PROBE_KEYS)

        schema = PROBE_SCHEMA if self.json_schema else None
        await self.preflight(
            lambda: self.request_body(messages, params, schema=schema),
            send,
            fixes={**FIXES, "response_format": NO_SCHEMA_FIX} if self.json_schema else FIXES,
            params=params,
        )
        if choice and "choice" in self.answer_modes:
            await self.preflight(
                lambda: self.request_body(messages, params, choice=True),
                send_choice,
                fixes=FIXES,
                params=params,
            )

    def _adaptation(self, parameter: str | None, params: GenerateParams) -> str | None:
        # Constrained answers were asked for: dropping the schema would answer unconstrained
        # under a run.json that says otherwise.
        if self.json_schema and parameter == "response_format":
            return None
        return super()._adaptation(parameter, params)

    async def choice_scores(
        self, messages: list[Message], keys: list[str], params: GenerateParams
    ) -> ChoiceOutput:
        if self.chat:
            asked = prefilled(messages) if self.choice_prefill else messages
            answer = await self._post(
                "chat/completions", self.request_body(asked, params, choice=True)
            )
        else:
            answer = await self._post("completions", choice_body(self.model, messages, params))
        return parse_choice(answer, keys)  # `choose` times it

    async def _post(
        self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> bytes:
        async with self._posting(path, body, headers) as response:
            return await response.read()

    @contextlib.asynccontextmanager
    async def _posting(
        self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """The server's answer to `body` at `path`; a refusal, a timeout or a broken
        connection (while the answer is read too) as a ProviderError."""
        url = f"{self.base_urls[self._next_url % len(self.base_urls)]}/{path}"
        self._next_url += 1  # the replicas in turn
        data = json.dumps(body).encode()
        try:
            async with self._client().post(url, data=data, headers=headers) as response:
                if response.status >= 400:
                    text = (await response.read()).decode("utf-8", "replace")
                    raise status_error(response.status, text, response.headers)
                yield response
        except TimeoutError:
            raise ProviderError(f"timed out calling {url}", retryable=True) from None
        except aiohttp.ClientError as error:  # refused, reset, disconnected, bad HTTP
            message = f"{type(error).__name__} calling {url}: {error}"
            raise ProviderError(message, retryable=True) from None

    def _not_an_api(self, error: ProviderError) -> Exception:
        """A first call answered 404, 405 or 501 with no vendor's error body: a web server."""
        if error.status not in NOT_AN_API or error.said is not None:
            return error
        return ProviderConfigError(
            f"{self.spec}: {' / '.join(self.base_urls)} is not an OpenAI-compatible server: its "
            f"/chat/completions answered the first call with {error}"
        )

    async def check(self) -> None:
        """Fail fast when a server cannot be reached, refuses the key, or has no /models."""
        for base in self.base_urls:
            try:
                async with self._client().get(
                    f"{base}/models", timeout=aiohttp.ClientTimeout(total=10)
                ) as response:
                    if response.status < 300:
                        _models_json(base, await response.read())
                    if response.status in (401, 403):
                        message = f"{base} refused the API key (HTTP {response.status})"
                        raise ProviderConfigError(message)
                    if response.status == 404:
                        # The host answers but not on this path: every call would 404 too.
                        raise ProviderConfigError(
                            f"{base}/models answered HTTP 404 for {self.spec}{url_hint(base)}"
                        )
            except (TimeoutError, aiohttp.ClientError) as error:
                reason = str(error) or type(error).__name__
                message = f"cannot reach {base} for {self.spec}: {reason}"
                raise ProviderConfigError(message) from None

    async def aclose(self) -> None:
        await self.close_batches()
        if self._session is not None:
            await self._session.close()
            self._session = None


def _models_json(base: str, body: bytes) -> None:
    """Refuse a /models answer that is not JSON: a web page would answer every call of the run."""
    text = body.decode("utf-8", "replace")
    try:
        json.loads(text)
    except ValueError:
        what = "HTML" if looks_like_html(text) else f"text that is not JSON: {body_line(text, 80)}"
        raise ProviderConfigError(
            f"{base} is not an OpenAI-compatible server: its /models answered {what}"
            f"{url_hint(base)}"
        ) from None


def url_hint(base: str) -> str:
    """What to check of a base URL whose /models answered wrongly."""
    if urlsplit(base).path.rstrip("/").endswith("/v1"):
        return " (is it the model server's own address and port?)"
    return " (is the base URL right? It usually ends in /v1)"


def _delta(line: bytes) -> str | None:
    """The text piece of one line of a streamed chat completion; None at its end.

    >>> _delta(b'data: {"choices": [{"delta": {"content": "Hi"}}]}\\n'), _delta(b"data: [DONE]")
    ('Hi', None)
    """
    text = line.decode("utf-8", "replace").strip()
    if not text.startswith("data:"):
        return ""  # a blank line between events, a comment, an event name
    data = text.removeprefix("data:").strip()
    if data == "[DONE]":
        return None
    try:
        choices = json.loads(data).get("choices") or [{}]
    except (json.JSONDecodeError, AttributeError):
        raise ProviderError(f"not a chat completion chunk: {data[:200]}", retryable=True) from None
    return str((choices[0].get("delta") or {}).get("content") or "")
