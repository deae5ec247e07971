"""The two replies as their models write them: `GET /p/{token}/stream`, server-sent events.

The page's script opens it once the message is stored (the message form says `stream=1`, so the
post stores the message and returns at once). Events, each `data` JSON:

- `piece` `{"position", "text"}`: the next piece of a reply;
- `reset` `{"position"}`: that reply failed partway and is being written again (streaming.py);
- `done` `{"step", "replies"}`: both replies are stored, exactly as sent here; the pick opens;
- `failed` `{"message"}`: the replies could not be had; the page offers to try again;
- `reload`: the participant is past this turn (another tab, a reload): show the current page.

A participant whose replies are stored already gets `done` at once. Without the script the page
never opens the stream: the message post generates the whole replies.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from attunebench.collect import crud
from attunebench.collect.deps import Context, context
from attunebench.collect.flow import Stage, where
from attunebench.collect.generation import GenerationError
from attunebench.collect.routers.participant import (
    Job,
    count_post,
    job_of,
    participant_of,
)
from attunebench.collect.streaming import Complete, Failed, Piece, Reset, stream_replies

router = APIRouter(prefix="/p/{token}")


def _sse(event: str, data: object) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _now(ctx: Context, token: str) -> tuple[Job | None, dict[str, object] | None]:
    """The pending turn's job, or what to send at once: the stored replies, or a reload."""
    with ctx.db.read() as session:
        participant = participant_of(ctx, session, token)
    at = where(participant, ctx.study)
    if at.stage == Stage.JUDGE:
        replies = {r.position: r.text for r in participant.turns[at.turn].replies}
        return None, {"step": at.step, "replies": replies}
    return job_of(ctx.study, participant), None


async def _events(ctx: Context, token: str, job: Job) -> AsyncIterator[bytes]:
    study = ctx.study
    try:
        async for event in stream_replies(ctx.providers, study, job.question):
            if isinstance(event, Piece):
                yield _sse("piece", {"position": event.position, "text": event.text})
            elif isinstance(event, Reset):
                yield _sse("reset", {"position": event.position})
            elif isinstance(event, Complete):
                await ctx.run_write(crud.store_pending_replies, token, job.turn, event.replies)
                replies = {reply.position: reply.text for reply in event.replies}
                yield _sse("done", {"step": f"judge:{job.turn}", "replies": replies})
            elif isinstance(event, Failed):
                await ctx.run_write(crud.record_failures, event.failures)
                yield _sse("failed", {"message": "The replies could not be written."})
    except GenerationError as error:  # a pool model gone from the study
        await ctx.run_write(crud.record_failures, error.failures)
        yield _sse("failed", {"message": "The replies could not be written."})


async def _once(event: str, data: object) -> AsyncIterator[bytes]:
    yield _sse(event, data)


@router.get("/stream")
async def stream(request: Request, token: str) -> StreamingResponse:
    ctx = context(request)
    job, stored = await run_in_threadpool(_now, ctx, token)
    if job is None:
        body = _once("done", stored) if stored is not None else _once("reload", {})
    else:
        # Writing the replies calls the models: it counts against the participant's limit,
        # unless the message's post counted it (once: a stream opened again counts). Another
        # request may store this turn's replies meanwhile, as it may while these are written:
        # the replies stored are then the first ones.
        if (token, job.turn) not in ctx.streams_paid:
            await ctx.run_write(count_post, ctx, token)
        ctx.streams_paid.discard((token, job.turn))
        body = _events(ctx, token, job)
    headers = {"X-Accel-Buffering": "no"}  # a reverse proxy must pass each event on at once
    return StreamingResponse(body, media_type="text/event-stream", headers=headers)
