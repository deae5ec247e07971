"""The one provider protocol every model speaks: `generate(messages, params) -> output`.

Models are addressed as `provider/model` (`openai/gpt-4o-mini`, `hf/./ckpt`, `mock/scripted`,
`baseline/majority`). SDKs are imported lazily inside the provider that needs them. A judge is
just another model used in the `judge` role.

Providers that need no language model at all (baselines, the mock) cannot read a prompt the
way an LLM does, so every request also carries a `TaskHint`: the structured content of the
item, which LLM providers ignore. The answer contract for each hint kind is in `hints.py`.
Such a provider may answer only some hint kinds; it says which in an optional
`supported_hints` attribute (see `supports_hint`), so a plan leaves out what it cannot answer
instead of calling it to fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from attunebench.models.hints import HintKind, TaskHint

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


class GenerateParams(BaseModel):
    """Sampling parameters. Everything here changes the output, so all of it enters cache keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature: float = 0.0
    max_tokens: int = Field(default=512, ge=1)
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    json_mode: bool = Field(default=False, description="Ask for a JSON object where supported.")


@dataclass(frozen=True, slots=True)
class ModelOutput:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


class ProviderError(Exception):
    """A call failed. `retryable` says whether trying again could help (429, 5xx, timeouts)."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after_s = retry_after_s


@runtime_checkable
class Provider(Protocol):
    """A model that can answer one request. Implementations must be safe to call concurrently."""

    @property
    def spec(self) -> str:
        """The `provider/model` address, as it appears in run.json and reports."""
        ...

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput: ...

    async def aclose(self) -> None: ...


def supports_hint(provider: object, kind: HintKind) -> bool:
    """Whether `provider` answers `kind` items, by its optional `supported_hints` attribute.

    An attribute left out or set to None means every kind, as for an LLM, which reads the
    prompt. The attribute is optional so existing providers satisfy `Provider` unchanged.
    """
    supported: frozenset[HintKind] | None = getattr(provider, "supported_hints", None)
    return supported is None or kind in supported
