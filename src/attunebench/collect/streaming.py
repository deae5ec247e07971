"""Replies as their models write them (`stream_replies`): both positions at once, as events.

Each position's reply is read piece by piece (a provider's `stream`, where it has one; else its
whole reply as one piece), within the study's `generation.timeout_s`. A reply that fails,
partway or before its first piece, is written again from the start once (a `Reset` tells the
page to clear what it showed); a second failure fails the turn, as a whole reply's failure does,
and the page offers to try again. Nothing is stored here: the caller stores the `Complete`
replies, exactly the text the pieces made (stripped), with their flags.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

from attunebench.collect.anonymity import reply_flags
from attunebench.collect.generation import Asked, Call, GenerationError, Question, Reply, ask
from attunebench.collect.study import Study
from attunebench.models.base import Provider, ProviderError

ATTEMPTS = 2  # a reply that fails is written once more before the turn fails


@dataclass(frozen=True, slots=True)
class Piece:
    position: str
    text: str


@dataclass(frozen=True, slots=True)
class Reset:
    """The position's reply failed partway and is being written again: clear it."""

    position: str


@dataclass(frozen=True, slots=True)
class Complete:
    replies: list[Reply]


@dataclass(frozen=True, slots=True)
class Failed:
    failures: dict[str, str]


Event = Piece | Reset | Complete | Failed
Queue = asyncio.Queue[Piece | Reset | Reply | GenerationError]  # what the writers report


async def _pieces(call: Call, asked: Asked) -> AsyncIterator[str]:
    stream = getattr(call.provider, "stream", None)
    if stream is None:
        yield (await call.provider.generate(asked.messages, asked.params, call.hint)).text
        return
    async for piece in stream(asked.messages, asked.params, call.hint):
        yield piece


async def _attempt(call: Call, asked: Asked, study: Study, queue: Queue) -> str:
    """One try at a position's reply, its pieces put on the queue as they come; the whole text."""
    written: list[str] = []
    try:
        async with asyncio.timeout(study.generation.timeout_s):
            async for piece in _pieces(call, asked):
                if piece:
                    written.append(piece)
                    await queue.put(Piece(call.position, piece))
    except TimeoutError:
        reason = f"no whole reply within {study.generation.timeout_s:g} s"
        raise GenerationError(reason, {call.provider.spec: reason}) from None
    except ProviderError as error:
        reason = str(error) or type(error).__name__
        raise GenerationError(reason, {call.provider.spec: reason}) from error
    text = "".join(written).strip()
    if not text:
        raise GenerationError("empty reply", {call.provider.spec: "the reply came back empty"})
    return text


async def _write(call: Call, asked: Asked, study: Study, queue: Queue) -> None:
    """A position's reply, tried up to ATTEMPTS times; its Reply or its last error on the queue."""
    started = time.perf_counter()
    for attempt in range(ATTEMPTS):
        try:
            text = await _attempt(call, asked, study, queue)
        except GenerationError as error:
            if attempt + 1 == ATTEMPTS:
                await queue.put(error)
                return
            await queue.put(Reset(call.position))
            continue
        latency_ms = round((time.perf_counter() - started) * 1000)
        flags = reply_flags(text, study.pool)
        await queue.put(Reply(call.position, call.provider.spec, text, latency_ms, flags))
        return


async def stream_replies(
    providers: Mapping[str, Provider], study: Study, question: Question
) -> AsyncIterator[Event]:
    """Both positions' pieces as they come, then `Complete` (both replies) or, as soon as one
    fails for good, `Failed` (the other is stopped: both or neither)."""
    asked = ask(providers, study, question)
    queue: Queue = asyncio.Queue()
    writers = [asyncio.create_task(_write(call, asked, study, queue)) for call in asked.calls]
    replies: list[Reply] = []
    failed: GenerationError | None = None
    try:
        while failed is None and len(replies) < len(asked.calls):
            event = await queue.get()
            if isinstance(event, Reply):
                replies.append(event)
            elif isinstance(event, GenerationError):
                failed = event
            else:
                yield event
    finally:
        for writer in writers:
            writer.cancel()
    if failed is not None:
        yield Failed(failed.failures)
    else:
        yield Complete(sorted(replies, key=lambda reply: reply.position))
