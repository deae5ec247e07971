"""`openai/<model>`: any server that speaks OpenAI's /v1/chat/completions (OpenAI, vLLM, SGLang,
llama.cpp, Ollama, OpenRouter), by base URL.

The HTTP path is aiohttp, one ClientSession per provider: at concurrency 64 it sustains about
three times the calls per second of the openai SDK on a small machine, and the engine's
overhead budget is under a millisecond a call. Several base URLs (replicas of one model) are
used round-robin. The key comes from the environment variable the models file names (default
OPENAI_API_KEY); a local server may run without one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

import aiohttp

from attunebench.models.base import (
    ChoiceOutput,
    GenerateParams,
    Message,
    ModelOutput,
    Provider,
    ProviderError,
)
from attunebench.models.completions import (
    choice_body,
    completion_body,
    parse_choice,
    parse_text_completion,
)
from attunebench.models.hints import TaskHint
from attunebench.models.http_errors import status_error
from attunebench.models.registry import PROVIDERS, ProviderConfigError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})


URLs = list[str] | tuple[str, ...]


def resolve_base_urls(base_url: str | None, base_urls: URLs | None) -> list[str]:
    """Explicit URLs first, then OPENAI_BASE_URL, then OpenAI's own; trailing slashes dropped."""
    urls = list(base_urls or ()) or ([base_url] if base_url else [])
    if not urls:
        urls = [os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL]
    return [url.rstrip("/") for url in urls]


def is_local(url: str) -> bool:
    return (urlparse(url).hostname or "") in LOCAL_HOSTS


class OpenAICompatProvider(Provider):
    """Chat completions over aiohttp; see the module docstring."""

    answer_modes = frozenset({"generate", "choice"})

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        base_urls: URLs | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        api_key: str | None = None,
        json_mode: bool = True,
        chat: bool = True,
        timeout_s: float = 120.0,
        max_connections: int = 0,
    ) -> None:
        self.model = model
        # False: a model with no chat template, asked through /completions with plain text.
        self.chat = chat
        self.base_urls = resolve_base_urls(base_url, base_urls)
        key = api_key if api_key is not None else os.environ.get(api_key_env)
        if not key and not all(is_local(url) for url in self.base_urls):
            raise ProviderConfigError(
                f"openai/{model}: environment variable {api_key_env} is not set "
                f"(needed for {', '.join(self.base_urls)})"
            )
        self._headers = {"Content-Type": "application/json"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self.json_mode = json_mode  # whether the server honours response_format json_object
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._max_connections = max_connections  # 0: as many as the engine's limit lets through
        self._session: aiohttp.ClientSession | None = None
        self._next_url = 0

    @property
    def spec(self) -> str:
        return f"openai/{self.model}"

    @property
    def endpoint(self) -> str:
        """What the engine's concurrency limit is shared by: the servers this model runs on."""
        return " ".join(self.base_urls)

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

    def _url(self) -> str:
        url = self.base_urls[self._next_url % len(self.base_urls)]
        self._next_url += 1
        return url

    def request_body(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [message.to_dict() for message in messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
        }
        if params.top_p is not None:
            body["top_p"] = params.top_p
        if params.seed is not None:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        if params.json_mode and self.json_mode:
            body["response_format"] = {"type": "json_object"}
        return body

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        started = time.perf_counter()
        if not self.chat:
            request = completion_body(self.model, messages, params)
            answer = await self._post("completions", request)
            return parse_text_completion(answer, time.perf_counter() - started)
        payload = json.dumps(self.request_body(messages, params)).encode()
        url = f"{self._url()}/chat/completions"
        try:
            async with self._client().post(url, data=payload) as response:
                body = await response.read()
                if response.status >= 400:
                    text = body.decode("utf-8", "replace")
                    raise status_error(response.status, text, response.headers.get("Retry-After"))
        except TimeoutError:
            raise ProviderError(f"timed out calling {url}", retryable=True) from None
        except aiohttp.ClientError as error:  # refused, reset, disconnected, bad HTTP
            message = f"{type(error).__name__} calling {url}: {error}"
            raise ProviderError(message, retryable=True) from None
        return parse_completion(body, time.perf_counter() - started)

    async def choose(
        self,
        messages: Sequence[Message],
        keys: Sequence[str],
        params: GenerateParams,
        hint: TaskHint | None = None,
    ) -> ChoiceOutput:
        started = time.perf_counter()
        answer = await self._post("chat/completions" if self.chat else "completions",
                                  choice_body(self.model, messages, chat=self.chat))  # fmt: skip
        return parse_choice(answer, keys, time.perf_counter() - started)

    async def _post(self, path: str, body: dict[str, Any]) -> bytes:
        url = f"{self._url()}/{path}"
        try:
            async with self._client().post(url, data=json.dumps(body).encode()) as response:
                answer = await response.read()
                if response.status >= 400:
                    text = answer.decode("utf-8", "replace")
                    raise status_error(response.status, text, response.headers.get("Retry-After"))
                return answer
        except TimeoutError:
            raise ProviderError(f"timed out calling {url}", retryable=True) from None
        except aiohttp.ClientError as error:  # refused, reset, disconnected, bad HTTP
            message = f"{type(error).__name__} calling {url}: {error}"
            raise ProviderError(message, retryable=True) from None

    async def check(self) -> None:
        """Fail fast, with a clear message, when a server cannot be reached, refuses the key, or
        has no OpenAI API at the base URL's path."""
        for base in self.base_urls:
            try:
                async with self._client().get(
                    f"{base}/models", timeout=aiohttp.ClientTimeout(total=10)
                ) as response:
                    if response.status in (401, 403):
                        message = f"{base} refused the API key (HTTP {response.status})"
                        raise ProviderConfigError(message)
                    if response.status == 404:
                        # The host answers but not on this path: every call would 404 too.
                        raise ProviderConfigError(
                            f"{base}/models answered HTTP 404 for {self.spec}: is the base URL "
                            "right? It usually ends in /v1"
                        )
            except (TimeoutError, aiohttp.ClientError) as error:
                reason = str(error) or type(error).__name__
                message = f"cannot reach {base} for {self.spec}: {reason}"
                raise ProviderConfigError(message) from None

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def parse_completion(body: bytes, latency_s: float) -> ModelOutput:
    """A ModelOutput from a chat-completions body; a malformed body is worth one more try."""
    try:
        data = json.loads(body)
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
        usage = data.get("usage") or {}
        return ModelOutput(
            text=text,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=latency_s,
            finish_reason=choice.get("finish_reason"),
            raw={"id": data.get("id"), "model": data.get("model")},
        )
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        snippet = body[:200].decode("utf-8", "replace")
        message = f"malformed completion ({error!r}): {snippet}"
        raise ProviderError(message, retryable=True) from None


@PROVIDERS.register("openai")
def make_openai(model: str, **options: Any) -> OpenAICompatProvider:
    return OpenAICompatProvider(model, **options)
