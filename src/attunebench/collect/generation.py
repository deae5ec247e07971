"""Two replies to the participant's message, one from each model of their pair, at once and
whole (streaming.py has them as the models write them).

Both models see the same conversation: the participant's messages and, for earlier turns, the
reply the participant chose to go on with, whichever model wrote it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from attunebench.answerform import TaskHint
from attunebench.collect.anonymity import reply_flags
from attunebench.collect.study import Study
from attunebench.models.base import GenerateParams, Message, Provider, ProviderError, Role

log = logging.getLogger(__name__)
# The roles of a turn's message and of the reply the conversation went on with.
ROLES: tuple[Role, Role] = ("user", "assistant")


class GenerationError(RuntimeError):
    """A reply could not be had; the turn can be retried. `failures` says why, per model."""

    def __init__(self, message: str, failures: dict[str, str]) -> None:
        super().__init__(message)
        self.failures = failures


@dataclass(frozen=True, slots=True)
class Reply:
    position: str
    model: str
    text: str
    latency_ms: int
    flags: list[str]


@dataclass(frozen=True, slots=True)
class Question:
    """What one turn puts to its pair of models, and the key its calls are cached under."""

    positions: Mapping[str, str]
    history: Sequence[tuple[str, str]]
    user_text: str
    item_key: str


@dataclass(frozen=True, slots=True)
class Call:
    """One position's request: its provider, the messages and parameters (the same for both
    positions) and its hint."""

    position: str
    provider: Provider
    messages: list[Message]
    params: GenerateParams
    hint: TaskHint


def ask(providers: Mapping[str, Provider], study: Study, question: Question) -> list[Call]:
    """The calls for positions A and B, whether their replies come whole or as a stream;
    GenerationError if a position's model has left the study's pool."""
    missing = sorted(set(question.positions.values()) - set(providers))
    if missing:
        reason = "not in the study's pool any more"
        raise GenerationError(reason, dict.fromkeys(missing, reason))
    said = [
        (role, text) for turn in question.history for role, text in zip(ROLES, turn, strict=True)
    ]
    said.append(("user", question.user_text))
    prompt = study.generation.system_prompt
    messages = [Message("system", prompt)] if prompt else []
    messages += [Message(role, text) for role, text in said]
    params = GenerateParams(
        temperature=study.generation.temperature, max_tokens=study.generation.max_tokens
    )
    return [
        Call(
            position,
            providers[spec],
            messages,
            params,
            TaskHint(
                kind="response",
                text=question.user_text,
                history=tuple(said[:-1]),
                item_key=f"{question.item_key}:{position}",
            ),
        )
        for position, spec in sorted(question.positions.items())
    ]


@asynccontextmanager
async def replying(call: Call, study: Study, late: str) -> AsyncIterator[None]:
    """The call's reply within the study's timeout: a timeout (`late` says why) or a provider's
    error is the GenerationError of the call's model."""
    try:
        async with asyncio.timeout(study.generation.timeout_s):
            yield
    except TimeoutError:
        raise GenerationError(late, {call.provider.spec: late}) from None
    except ProviderError as error:
        reason = str(error) or type(error).__name__
        log.warning("reply %s from %s failed: %s", call.position, call.provider.spec, reason)
        raise GenerationError(reason, {call.provider.spec: reason}) from error


def made_reply(call: Call, study: Study, text: str, started: float) -> Reply:
    """The call's reply, stripped and flagged, asked for at `started` (perf_counter); a
    GenerationError if it is empty."""
    text = text.strip()
    if not text:
        raise GenerationError("empty reply", {call.provider.spec: "the reply came back empty"})
    latency_ms = round((time.perf_counter() - started) * 1000)
    return Reply(call.position, call.provider.spec, text, latency_ms, reply_flags(text, study.pool))


async def _one(call: Call, study: Study) -> Reply:
    started = time.perf_counter()
    async with replying(call, study, f"no reply within {study.generation.timeout_s:g} s"):
        output = await call.provider.generate(call.messages, call.params, call.hint)
    return made_reply(call, study, output.text, started)


async def generate_replies(
    providers: Mapping[str, Provider], study: Study, question: Question
) -> list[Reply]:
    """Replies for positions A and B, generated concurrently; both or neither."""
    calls = (_one(call, study) for call in ask(providers, study, question))
    results = await asyncio.gather(*calls, return_exceptions=True)
    failures: dict[str, str] = {}
    for result in results:
        if isinstance(result, GenerationError):
            failures.update(result.failures)
        elif isinstance(result, BaseException):
            raise result
    if failures:
        raise GenerationError("; ".join(f"{m}: {e}" for m, e in failures.items()), failures)
    return [r for r in results if isinstance(r, Reply)]
