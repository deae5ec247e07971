"""Helpers for the task tests: an in-test Caller over mock providers, and conversation builders."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import (
    Context,
    Conversation,
    Need,
    Preference,
    Response,
    Source,
    State,
    Turn,
)
from attunebench.models.base import GenerateParams, Message, Provider, ProviderError
from attunebench.models.hints import TaskHint
from attunebench.models.mock import MockProvider
from attunebench.records import PromptInfo
from attunebench.tasks.base import CallResult, CallRole, Item

Responder = Callable[[list[Message], TaskHint | None], str]


@dataclass
class Call:
    model: str
    messages: list[Message]
    prompt: PromptInfo
    item: Item
    role: CallRole
    params: GenerateParams | None
    hint: TaskHint | None


@dataclass
class ScriptedCaller:
    """Implements `Caller` by calling providers directly: no cache, no retries.

    A `ProviderError` becomes a failed `CallResult`, as the engine's does once retries run out.
    """

    providers: dict[str, Provider]
    calls: list[Call] = field(default_factory=list)

    @classmethod
    def scripted(cls, **responders: Responder) -> ScriptedCaller:
        """One mock provider per model name, answering with `responder(messages, hint)`."""
        return cls({name: MockProvider(name, outputs=fn) for name, fn in responders.items()})

    async def call(
        self,
        model: str,
        messages: list[Message],
        *,
        prompt: PromptInfo,
        item: Item,
        role: CallRole = "subject",
        params: GenerateParams | None = None,
        hint: TaskHint | None = None,
    ) -> CallResult:
        self.calls.append(Call(model, messages, prompt, item, role, params, hint))
        try:
            provider = self.providers[model]
            output = await provider.generate(messages, params or GenerateParams(), hint)
        except ProviderError as error:
            return CallResult(text=None, error=str(error))
        return CallResult(
            text=output.text, input_tokens=output.input_tokens, output_tokens=output.output_tokens
        )

    def of(self, model: str) -> list[Call]:
        return [c for c in self.calls if c.model == model]


def sample_conversations() -> list[Conversation]:
    return read_conversations(sample_path())


def conversation(turns: list[Turn], *, cid: str = "c1", **context: Any) -> Conversation:
    return Conversation(
        id=cid,
        source=Source(kind="simulated", name="task-tests"),
        taxonomy="attunebench-default",
        context=Context(**context),
        turns=tuple(turns),
    )


def two_reply_turn(
    index: int,
    user: str,
    *,
    chosen: str | None = "a",
    tie: bool = False,
    state: State | None = None,
    texts: tuple[str, str] = ("Reply one.", "Reply two, a longer one."),
    ratings: tuple[float | None, float | None] = (None, None),
    behaviors: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
    wanted: str | None = None,
    continued: str | None = "a",
) -> Turn:
    responses = tuple(
        Response(id=rid, text=text, rating=rating, behaviors=labels)
        for rid, text, rating, labels in zip("ab", texts, ratings, behaviors, strict=True)
    )
    preference = None
    if chosen is not None or tie:
        preference = Preference(chosen=None if tie else chosen, tie=tie)
    return Turn(
        index=index, user=user, state=state, responses=responses,
        need=Need(text=wanted) if wanted else None, preference=preference, continued=continued,
    )


class HashEncoder:
    """A stand-in sentence encoder: a fixed unit vector per text, drawn from its hash."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
            vector = np.random.default_rng(seed).normal(size=16)
            rows.append(vector / np.linalg.norm(vector))
        return np.asarray(rows, dtype=np.float32)
