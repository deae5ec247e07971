"""`anthropic/<model>`: Claude models through the official anthropic SDK, imported on first use.

The SDK's own retries are switched off: the engine retries, with one policy for every provider.
System messages go in the request's `system` field, as the Messages API wants. Recent SDKs no
longer take sampling parameters as arguments, so temperature and top_p travel in the body
(`sampling=False` leaves them out, for models that refuse them).
"""

from __future__ import annotations

import os
import time
from typing import Any

from attunebench.models.base import GenerateParams, Message, ModelOutput, Provider, ProviderError
from attunebench.models.hints import TaskHint
from attunebench.models.http_errors import status_error
from attunebench.models.openai_compat import is_local
from attunebench.models.registry import PROVIDERS, ProviderConfigError


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
        sampling: bool = True,
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
        self.sampling = sampling
        self._sdk = anthropic
        self._client = anthropic.AsyncAnthropic(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=timeout_s
        )

    @property
    def spec(self) -> str:
        return f"anthropic/{self.model}"

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.anthropic.com"

    def request(self, messages: list[Message], params: GenerateParams) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": params.max_tokens,
            "messages": [m.to_dict() for m in messages if m.role != "system"],
        }
        if system:
            request["system"] = system
        if self.sampling:
            sampling = {"temperature": params.temperature, "top_p": params.top_p}
            request["extra_body"] = {k: v for k, v in sampling.items() if v is not None}
        if params.stop:
            request["stop_sequences"] = list(params.stop)
        return request

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        sdk = self._sdk
        started = time.perf_counter()
        try:
            reply = await self._client.messages.create(**self.request(messages, params))
        except sdk.APIStatusError as error:
            headers = error.response.headers
            raise status_error(error.status_code, str(error), headers.get("retry-after")) from None
        except sdk.APIConnectionError as error:  # includes timeouts
            raise ProviderError(f"{type(error).__name__}: {error}", retryable=True) from None
        text = "".join(block.text for block in reply.content if block.type == "text")
        return ModelOutput(
            text=text,
            input_tokens=reply.usage.input_tokens,
            output_tokens=reply.usage.output_tokens,
            latency_s=time.perf_counter() - started,
            finish_reason=reply.stop_reason,
            raw={"id": reply.id, "model": reply.model},
        )

    async def aclose(self) -> None:
        await self._client.close()


@PROVIDERS.register("anthropic")
def make_anthropic(model: str, **options: Any) -> AnthropicProvider:
    return AnthropicProvider(model, **options)
