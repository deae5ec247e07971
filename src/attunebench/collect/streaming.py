"""Replies as their models write them (`stream_replies`): both positions at once, as events.

A reply that fails, partway or before its first piece, is written again from the start once (a
`Reset` tells the page to clear what it showed); a second failure fails the turn, as a whole
reply's failure does. Nothing is stored here: the caller stores the `Complete` replies."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass

from attunebench.collect.generation import (
    Call,
    GenerationError,
    Question,
    Reply,
    ask,
    made_reply,
    replying,
)
from attunebench.collect.study import Study
from attunebench.models.base import Provider

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


async def _pieces(call: Call) -> AsyncIterator[str]:
    stream = getattr(call.provider, "stream", None)
    if stream is None:
        yield (await call.provider.generate(call.messages, call.params, call.hint)).text
        return
    async for piece in stream(call.messages, call.params, call.hint):
        yield piece


async def _attempt(call: Call, study: Study, queue: Queue, started: float) -> Reply:
    """One try at a position's reply, its pieces put on the queue as they come."""
    written: list[str] = []
    async with replying(call, study, f"no whole reply within {study.generation.timeout_s:g} s"):
        async for piece in _pieces(call):
            if piece:
                written.append(piece)
                await queue.put(Piece(call.position, piece))
    return made_reply(call, study, "".join(written), started)


async def _write(call: Call, study: Study, queue: Queue) -> None:
    """A position's reply, tried up to ATTEMPTS times; its Reply or its last error on the queue."""
    started = time.perf_counter()
    for attempt in range(ATTEMPTS):
        try:
            await queue.put(await _attempt(call, study, queue, started))
            return
        except GenerationError as error:
            await queue.put(error if attempt + 1 == ATTEMPTS else Reset(call.position))


async def stream_replies(
    providers: Mapping[str, Provider], study: Study, question: Question
) -> AsyncIterator[Event]:
    """Both positions' pieces as they come, then `Complete` (both replies) or, as soon as one
    fails for good, `Failed` (the other is stopped: both or neither)."""
    calls = ask(providers, study, question)
    queue: Queue = asyncio.Queue()
    writers = [asyncio.create_task(_write(call, study, queue)) for call in calls]
    replies: list[Reply] = []
    failed: GenerationError | None = None
    try:
        while failed is None and len(replies) < len(calls):
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
