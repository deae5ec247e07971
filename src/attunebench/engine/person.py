"""`person/SPEC`: a model in the role of the person of the conversation, answering the task's
question about themselves. Registered with the providers when the engine is imported (the
frame is a prompt, and the prompts build on the models: the role sits above both).

The task's messages stay as they are; a frame before its system message says who answers.
Everything else is the model's own, so a run of `person/SPEC` is an ordinary run of SPEC asked
as the person. The frame's version enters the cache key, so the role's answers never pass for
the model's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attunebench.answerform import AnswerForm, HintKind, TaskHint
from attunebench.models.base import (
    ChoiceOutput,
    GenerateParams,
    Message,
    ModelOutput,
    Provider,
)
from attunebench.models.registry import PROVIDERS, ROLE_PREFIX, make_provider
from attunebench.prompts import load_prompt
from attunebench.records import ServerUsage

PERSON = ROLE_PREFIX
PERSONA = load_prompt(__name__, "simulated-person")


def framed(messages: Sequence[Message]) -> list[Message]:
    """The messages with the first-person frame before their system message."""
    frame = PERSONA.render()[0].content
    if messages and messages[0].role == "system":
        return [Message("system", f"{frame}\n\n{messages[0].content}"), *messages[1:]]
    return [Message("system", frame), *messages]


class Person(Provider):
    """`model` asked as the person. It closes `model` only where it made it (`owns`): a
    validation hands one bound model to every rollout's role, and closes it itself."""

    def __init__(self, model: Provider, *, owns: bool = True) -> None:
        self.model = model
        self.owns = owns
        self.supported_hints = model.supported_hints
        self.capabilities = model.capabilities
        self.cacheable = model.cacheable
        self.answer_modes = model.answer_modes
        self.reads_gold = model.reads_gold
        self.slots = model.slots

    @property
    def spec(self) -> str:
        return f"{PERSON}/{self.model.spec}"

    @property
    def endpoint(self) -> str:
        return self.model.endpoint  # the rollouts of one model share its server's slots

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        return await self.model.generate(framed(messages), params, hint)

    async def choice_scores(
        self, messages: list[Message], keys: list[str], params: GenerateParams
    ) -> ChoiceOutput:
        return await self.model.choice_scores(framed(messages), keys, params)

    def answers_form(self, form: AnswerForm) -> bool:
        return self.model.answers_form(form)

    def unsupported_reason(self, kind: HintKind) -> str:
        return self.model.unsupported_reason(kind)

    def mode_reason(self, mode: str) -> str:
        return self.model.mode_reason(mode)

    async def check(self) -> None:
        await self.model.check()

    async def probe(self, params: GenerateParams, *, choice: bool = False) -> None:
        await self.model.probe(params, choice=choice)

    @property
    def adapted(self) -> dict[str, str]:
        return self.model.adapted

    def found(self) -> dict[str, Any]:
        return self.model.found()

    def adopt(self, found: Mapping[str, Any], params: GenerateParams) -> None:
        self.model.adopt(found, params)

    def call_budget(self, params: GenerateParams) -> int:
        return self.model.call_budget(params)

    def cache_identity(self) -> dict[str, Any]:
        return {**self.model.cache_identity(), PERSON: PERSONA.info.version}

    def tasks_named(self) -> tuple[str, ...]:
        return self.model.tasks_named()

    def server_usage(self) -> ServerUsage | None:
        return self.model.server_usage() if self.owns else None

    async def aclose(self) -> None:
        if self.owns:
            await self.model.aclose()


@PROVIDERS.register(PERSON)
def make_person(model: str, **options: Any) -> Provider:
    """`person/SPEC`: SPEC made with the entry's options, asked as the person."""
    return Person(make_provider(model, **options))
