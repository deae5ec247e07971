"""The one provider protocol every model speaks: `generate(messages, params) -> output`.

Models are addressed as `provider/model` (`openai/gpt-4o-mini`, `hf/./ckpt`, `mock/scripted`,
`baseline/majority`). SDKs are imported lazily inside the provider that needs them. A judge is
just another model used in the `judge` role.

Providers that need no language model at all (baselines, the mock) cannot read a prompt the
way an LLM does, so every request also carries a `TaskHint`: the structured content of the
item, which LLM providers ignore. The answer contract for each hint kind is in `hints.py`.
Such a provider may answer only some hint kinds; it says which in `supported_hints`, so a
plan leaves out what it cannot answer instead of calling it to fail.

In `choice` mode a model is asked for the probabilities of short option keys as its next
token (`choose`), which a base model can answer where it cannot write the JSON asked for.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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


@dataclass(frozen=True, slots=True)
class ChoiceOutput:
    """The probabilities a model gave each option key as its next token.

    `floored` keys were missing from the provider's top-k and were given `floor` instead;
    the probabilities are renormalised over the keys.
    """

    probabilities: dict[str, float]
    floored: tuple[str, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0


class Provider(ABC):
    """A model that can answer one request. Implementations must be safe to call concurrently.

    Besides `spec` and `generate`, a provider may declare optional features; each has a
    default here, so a provider states only what differs (as inspect_ai's ModelAPI does):

    - `supported_hints`: the hint kinds it answers (None: every kind, as an LLM reading the
      prompt does); `unsupported_reason` says why another kind is not answered;
    - `cacheable`: whether its answers may be cached (a fitted baseline's may not);
    - `endpoint`: what its concurrency limit is shared by (its servers);
    - `check`: a quick call that fails fast, with a clear message, when it cannot work;
    - `answer_modes` and `choose`: option probabilities for `choice` mode;
    - `reads_gold`: a simulated instrument that is handed the item's gold (`sim/`).
    """

    supported_hints: frozenset[HintKind] | None = None
    cacheable: bool = True
    answer_modes: frozenset[str] = frozenset({"generate"})
    reads_gold: bool = False  # a simulated instrument answering from the item's gold

    @property
    @abstractmethod
    def spec(self) -> str:
        """The `provider/model` address, as it appears in run.json and reports."""

    @abstractmethod
    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput: ...

    @property
    def endpoint(self) -> str:
        return f"model:{self.spec}"

    def answers(self, kind: HintKind) -> bool:
        return self.supported_hints is None or kind in self.supported_hints

    def unsupported_reason(self, kind: HintKind) -> str:
        return f"{self.spec} does not answer {kind!r} items"

    async def check(self) -> None:
        """Fail fast (ProviderConfigError) when the model cannot be reached or used."""
        return None

    def check_data(self, conversation_ids: frozenset[str], dataset: Path) -> None:
        """Refuse (ProviderConfigError) data this model must not answer: a fitted baseline
        refuses data that overlaps its train split."""
        return None

    async def choose(
        self,
        messages: Sequence[Message],
        keys: Sequence[str],
        params: GenerateParams,
        hint: TaskHint | None = None,
    ) -> ChoiceOutput:
        """The probabilities of `keys` as the next token after `messages`."""
        raise ProviderError(f"{self.spec} cannot answer in choice mode", retryable=False)

    async def aclose(self) -> None:
        return None
