"""The one provider protocol every model speaks: `generate(messages, params) -> output`.

Models are addressed as `provider/model` (`openai/gpt-4o-mini`, `hf/./ckpt`, `baseline/majority`).
A judge is just another model used in the `judge` role. Providers that need no language model
(baselines, the mock) cannot read a prompt, so every request also carries a `TaskHint`, the
item's structured content, which LLM providers ignore. In `choice` mode a model is asked for
the probabilities of short option keys as its next token (`choose`), which a base model can
answer where it cannot write JSON."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import Field, field_validator

from attunebench.answerform import AnswerForm, HintKind, TaskHint
from attunebench.frozen import Frozen
from attunebench.records import ServerUsage

if TYPE_CHECKING:  # capabilities imports the registry, which imports this module
    from attunebench.models.capabilities import Capabilities

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


# Fields added after the cache key's recipe was fixed: they enter a key only when set, so
# every key made before they existed still finds its answer.
_KEYED_WHEN_SET: dict[str, Any] = {
    "reasoning_effort": None,
    "thinking_budget": None,
    "thinking": None,
    "effort": None,
    "extra": {},
}


class GenerateParams(Frozen):
    """Sampling parameters. Everything here changes the output, so all of it enters cache keys.

    `max_tokens` is the answer's budget; a provider that lets the model think adds its thinking
    budget or allowance to it. `extra` holds provider-specific request fields, sent as they are."""

    temperature: float = 0.0
    max_tokens: int = Field(default=512, ge=1)
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    json_mode: bool = Field(default=False, description="Ask for a JSON object where supported.")
    reasoning_effort: str | None = Field(
        default=None,
        min_length=1,
        description="OpenAI reasoning models: none, minimal, low, medium, high, xhigh "
        "(model-dependent).",
    )
    thinking_budget: int | None = Field(
        default=None, ge=1024, description="Anthropic extended thinking: tokens it may think."
    )
    thinking: Literal["adaptive"] | None = Field(
        default=None, description="Anthropic: adaptive thinking (the model decides how much)."
    )
    effort: str | None = Field(
        default=None,
        min_length=1,
        description="Anthropic output_config.effort: low, medium, high, xhigh, max "
        "(model-dependent).",
    )
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Provider-specific request fields, passed through."
    )

    @field_validator("extra")
    @classmethod
    def _plain_json(cls, extra: dict[str, Any]) -> dict[str, Any]:
        json.dumps(extra)  # a TOML date would not travel; fail when the file is read
        return extra

    def key_fields(self) -> dict[str, Any]:
        """These parameters as they enter a cache key (the later fields only when set)."""
        fields = self.model_dump(mode="json")
        for name, default in _KEYED_WHEN_SET.items():
            if fields[name] == default:
                del fields[name]
        return fields


@dataclass(frozen=True, slots=True)
class ModelOutput:
    """One answer. `output_tokens` counts every token billed as output, reasoning included;
    `reasoning_tokens` is the part the provider reports as hidden reasoning. `thinking` is
    reasoning text the model showed (Anthropic's thinking blocks, a server's reasoning
    field): kept, never parsed as the answer. `batched`: answered through a batch API."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    reasoning_tokens: int = 0
    thinking: str | None = None
    batched: bool = False
    cached_input_tokens: int = 0  # the part of input_tokens read from the server's cache
    cache_write_tokens: int = 0  # the part of input_tokens written to the server's cache
    cache_write_1h_tokens: int = 0  # the part of those kept an hour (Anthropic's longer TTL)


class ProviderError(Exception):
    """A call failed. `retryable`: trying again now could help (429, 5xx, timeouts); `permanent`:
    no later try could either (by default: not retryable). `kind`, `code` and `param` are the
    server's structured error fields, so what a refusal names is never guessed from its wording."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after_s: float | None = None,
        permanent: bool | None = None,
        kind: str | None = None,
        code: str | None = None,
        param: str | None = None,
        said: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.retry_after_s = retry_after_s
        self.permanent = not retryable if permanent is None else permanent
        self.kind = kind
        self.code = code
        self.param = param
        self.said = said  # the server's own message, without the status and body around it
        self.headers = dict(headers or {})  # the response's headers (rate limits, retry-after)


@dataclass(frozen=True, slots=True)
class BatchCounts:
    """Where a batch provider's work stands: requests waiting to go out, and batches."""

    queued: int = 0
    submitted: int = 0
    in_progress: int = 0
    done: int = 0

    def __add__(self, other: BatchCounts) -> BatchCounts:
        return BatchCounts(
            self.queued + other.queued,
            self.submitted + other.submitted,
            self.in_progress + other.in_progress,
            self.done + other.done,
        )


@dataclass(frozen=True, slots=True)
class ChoiceOutput:
    """The probabilities a model gave each option key as its next token.

    `floored` keys were missing from the provider's top-k and were given `floor` instead;
    the probabilities are renormalised over the keys."""

    probabilities: dict[str, float]
    floored: tuple[str, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Example:
    """What a fitted baseline learns from: a train item's query as a model reads it (its
    hint, with its item key), and the item's gold (its JSON). `engine.training` builds them
    from a train split, as each task builds its items (`tasks.helpers.fitting.examples`)."""

    hint: TaskHint
    gold: Mapping[str, Any]


def quiet(line: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Preparation:
    """What `prepare` is told: the run's hint kinds, a cache folder (None: none), a reporter."""

    kinds: frozenset[HintKind]
    cache_dir: Path | None = None
    report: Callable[[str], None] = quiet


class Provider(ABC):
    """A model that can answer one request. Implementations must be safe to call concurrently.

    Besides `spec` and `generate`, every optional feature (hints answered, choice mode, a
    pre-flight, batch mode, preparation, learning from a train split, a server of its own)
    has a default here, so a provider states only what differs, as inspect_ai's ModelAPI does."""

    supported_hints: frozenset[HintKind] | None = None
    capabilities: Capabilities | None = None
    cacheable: bool = True
    answer_modes: frozenset[str] = frozenset({"generate"})
    reads_gold: bool = False  # a simulated instrument answering from the item's gold
    slots: int | None = None  # calls its server takes at once (None: the entry's concurrency)

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

    def answers_form(self, form: AnswerForm) -> bool:
        """Whether it answers hints of this form (the plan asks, before any call)."""
        return self.supported_hints is None or form.kind in self.supported_hints

    def unsupported_reason(self, kind: HintKind) -> str:
        return f"{self.spec} does not answer {kind!r} items"

    async def check(self) -> None:
        """Fail fast (ProviderConfigError) when the model cannot be reached or used."""
        return None

    async def probe(self, params: GenerateParams, *, choice: bool = False) -> None:
        """One real call with these parameters (and the choice body, with `choice`)."""
        return None

    @property
    def adapted(self) -> dict[str, str]:
        """Parameters the pre-flight changed, each with what was done (none by default)."""
        return {}

    def found(self) -> dict[str, Any]:
        """What its pre-flight found (plain JSON), for another process to `adopt`."""
        caps = self.capabilities
        described = caps.model_dump(mode="json") if caps is not None else None
        return {"capabilities": described, "adapted": dict(self.adapted)}

    def adopt(self, found: Mapping[str, Any], params: GenerateParams) -> None:
        """Take what a pre-flight of this model found in another process, in place of `probe`."""
        return None

    def call_budget(self, params: GenerateParams) -> int:
        """The most output tokens a call with these parameters can be billed (thinking included)."""
        return params.max_tokens

    def thinking_note(self, params: GenerateParams) -> str | None:
        """What the run is told at plan time of how this model thinks; None: nothing to tell."""
        return None

    def cache_identity(self) -> dict[str, Any]:
        """What the provider found at start-up that decides its answers (enters every cache key)."""
        return {}

    def tasks_named(self) -> tuple[str, ...]:
        """The tasks its options name, which the engine checks against the task registry."""
        return ()

    def rate_note(self, concurrency: int) -> str | None:
        """Said before the run when `concurrency` calls at once pass the server's rate limit."""
        return None

    def mode_reason(self, mode: str) -> str:
        """Why this model does not answer in `mode` (said at plan time)."""
        return f"{self.spec} cannot answer in {mode} mode"

    def attach(self, rundir: Path) -> None:
        """The run directory this provider works for (a batch provider keeps its journal there)."""
        return None

    def batch_counts(self) -> BatchCounts | None:
        """Batches submitted, in progress and done; None for a provider that calls live."""
        return None

    async def prepare(self, preparation: Preparation) -> None:
        """Get ready to answer `preparation.kinds`; an interrupt stops it, nothing half-written."""
        return None

    @property
    def learns_from(self) -> Path | None:
        """The train split it is fitted on (a fitted baseline), None for one that learns nothing."""
        return None

    def learn(self, examples: Sequence[Example]) -> None:
        """Take the examples built from `learns_from` (see `Example`)."""
        return None

    async def choose(
        self,
        messages: Sequence[Message],
        keys: Sequence[str],
        params: GenerateParams,
        hint: TaskHint | None = None,
    ) -> ChoiceOutput:
        """The probabilities of `keys` as the next token after `messages`, timed here."""
        started = time.perf_counter()
        output = await self.choice_scores(list(messages), list(keys), params)
        return dataclasses.replace(output, latency_s=time.perf_counter() - started)

    async def choice_scores(
        self, messages: list[Message], keys: list[str], params: GenerateParams
    ) -> ChoiceOutput:
        """What a provider with a choice mode gives `choose` (which times it)."""
        raise ProviderError(f"{self.spec} cannot answer in choice mode", retryable=False)

    def server_usage(self) -> ServerUsage | None:
        """What the server it runs for this session reported doing; None when it runs none."""
        return None

    async def aclose(self) -> None:
        return None


class NamedProvider(Provider):
    """A provider whose spec is fixed when it is made."""

    def __init__(self, spec: str) -> None:
        self._spec = spec

    @property
    def spec(self) -> str:
        return self._spec


def keyed_rng(key: str) -> np.random.Generator:
    """A generator seeded by the SHA-256 of `key`: the same key draws the same numbers in any
    process (Python's own hash is salted per process), for providers that draw per item."""
    return np.random.default_rng(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
