"""Two replies to the participant's message, one from each model of their pair, at once:
whole (`generate_replies`), or as the models write them (`stream_replies`).

Both models see the same conversation: the participant's messages and, for earlier turns, the
reply the participant chose to go on with, whichever model wrote it. A provider with a `stream`
method (an async iterator of text pieces) is read as a stream; any other gives its whole reply
as one piece. A streamed reply that fails partway is written again from the start, once,
before the turn counts as failed: the participant's message is stored already and their page
keeps what they have answered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attunebench.answerform import TaskHint
from attunebench.collect.anonymity import reply_flags
from attunebench.collect.study import Study
from attunebench.models.base import GenerateParams, Message, Provider, ProviderError

log = logging.getLogger(__name__)


class GenerationError(RuntimeError):
    """A reply could not be had (provider error, timeout, empty text); the turn can be retried.

    `failures` says why, for each model whose reply failed.
    """

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


def build_messages(
    study: Study, history: Sequence[tuple[str, str]], user_text: str
) -> list[Message]:
    """System prompt, then (user, chosen reply) pairs, then the new message."""
    prompt = study.generation.system_prompt
    messages = [Message("system", prompt)] if prompt else []
    for user, reply in history:
        messages += [Message("user", user), Message("assistant", reply)]
    messages.append(Message("user", user_text))
    return messages


@dataclass(frozen=True, slots=True)
class Question:
    """What one turn puts to its pair of models: the model at each position, the conversation
    so far (the participant's messages and the replies they went on with), the new message,
    and the key its calls are cached under."""

    positions: Mapping[str, str]
    history: Sequence[tuple[str, str]]
    user_text: str
    item_key: str


@dataclass(frozen=True, slots=True)
class Call:
    """One position's request: its provider and its hint (the messages are shared)."""

    position: str
    provider: Provider
    hint: TaskHint


def calls_for(providers: Mapping[str, Provider], question: Question) -> list[Call]:
    hint_history = tuple(
        pair for user, reply in question.history for pair in (("user", user), ("assistant", reply))
    )
    missing = sorted(set(question.positions.values()) - set(providers))
    if missing:
        reason = "not in the study's pool any more"
        raise GenerationError(reason, dict.fromkeys(missing, reason))
    calls = []
    for position, spec in sorted(question.positions.items()):
        key = f"{question.item_key}:{position}"
        hint = TaskHint(
            kind="response", text=question.user_text, history=hint_history, item_key=key
        )
        calls.append(Call(position, providers[spec], hint))
    return calls


@dataclass(frozen=True, slots=True)
class Asked:
    """What a turn asks its models: one call per position, and the messages and parameters
    the calls share."""

    calls: list[Call]
    messages: list[Message]
    params: GenerateParams


def ask(providers: Mapping[str, Provider], study: Study, question: Question) -> Asked:
    """The calls for positions A and B, whether their replies come whole or as a stream;
    GenerationError if a position's model has left the study's pool."""
    params = GenerateParams(
        temperature=study.generation.temperature, max_tokens=study.generation.max_tokens
    )
    messages = build_messages(study, question.history, question.user_text)
    return Asked(calls_for(providers, question), messages, params)


async def _one(call: Call, asked: Asked, study: Study) -> Reply:
    started = time.perf_counter()
    try:
        async with asyncio.timeout(study.generation.timeout_s):
            output = await call.provider.generate(asked.messages, asked.params, call.hint)
    except TimeoutError:
        reason = f"no reply within {study.generation.timeout_s:g} s"
        raise GenerationError(reason, {call.provider.spec: reason}) from None
    except ProviderError as error:
        reason = str(error) or type(error).__name__
        log.warning("reply %s from %s failed: %s", call.position, call.provider.spec, reason)
        raise GenerationError(reason, {call.provider.spec: reason}) from error
    text = output.text.strip()
    if not text:
        raise GenerationError("empty reply", {call.provider.spec: "the reply came back empty"})
    latency_ms = round((time.perf_counter() - started) * 1000)
    return Reply(call.position, call.provider.spec, text, latency_ms, reply_flags(text, study.pool))


async def generate_replies(
    providers: Mapping[str, Provider], study: Study, question: Question
) -> list[Reply]:
    """Replies for positions A and B, generated concurrently; both or neither."""
    asked = ask(providers, study, question)
    calls = (_one(call, asked, study) for call in asked.calls)
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
