"""The participant's path, under their invitation link `/p/{token}`.

`GET /p/{token}` always shows the page for where they are (see flow.py). Each answer is a POST
that is committed before its redirect back to that page, so an acknowledged answer is a stored
answer. Nothing here names a model: replies are known to the page only as A and B.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from attunebench.collect import crud, schemas
from attunebench.collect.assignment import Pair
from attunebench.collect.deps import Context, PageError, context, read_form, render, require_csrf
from attunebench.collect.flow import Stage, Where, may_end, where
from attunebench.collect.generation import GenerationError, Reply, generate_replies
from attunebench.collect.models import ParticipantRow, TurnRow
from attunebench.collect.security import plausible_token
from attunebench.collect.study import PANAS_ITEMS

router = APIRouter(prefix="/p/{token}")
A = TypeVar("A")
Apply = Callable[[Session, ParticipantRow, A], None]

NOT_FOUND = PageError(404, "Link not found", "This invitation link is not valid.")


def _participant(session: Session, token: str, lock: bool = False) -> ParticipantRow:
    participant = None
    if plausible_token(token):
        participant = crud.participant_by_token(session, token, lock)
    if participant is None:
        raise NOT_FOUND
    return participant


def continued_text(turn: TurnRow) -> str:
    position = "A" if turn.choice in (None, "tie") else turn.choice
    return next(r.text for r in turn.replies if r.position == position)


def history(participant: ParticipantRow) -> list[tuple[str, str]]:
    return [(t.user_text, continued_text(t)) for t in participant.turns if t.picked_at is not None]


def _view(ctx: Context, participant: ParticipantRow, token: str) -> dict[str, Any]:
    at = where(participant, ctx.study)
    current = participant.turns[at.turn] if at.stage in (Stage.PENDING, Stage.JUDGE) else None
    return {
        "token": token,
        "csrf": ctx.signer.csrf("participant", token),
        "step": at.step,
        "stage": at.stage.value,
        "turn_number": at.turn + 1,
        "history": history(participant),
        "current": None if current is None else current.user_text,
        "replies": [] if current is None else [(r.position, r.text) for r in current.replies],
        "safety_now": current is not None and current.safety_notice,
        "may_end": may_end(participant, ctx.study),
        "taxonomy": ctx.taxonomy,
        "panas_items": PANAS_ITEMS,
    }


@router.get("", response_class=HTMLResponse)
def page(request: Request, token: str) -> HTMLResponse:
    ctx = context(request)
    with ctx.db.read() as session:
        view = _view(ctx, _participant(session, token), token)
    return render(request, f"participant/{view['stage']}.html", view)


@router.get("/support", response_class=HTMLResponse)
def support(request: Request, token: str) -> HTMLResponse:
    ctx = context(request)
    with ctx.db.read() as session:
        _participant(session, token)
    return render(request, "participant/support.html", {"token": token})


def _store(ctx: Context, token: str, step: str, stage: Stage, apply: Apply[A], answer: A) -> None:
    """Apply an answer if the participant is still at the step the form was made for."""
    with ctx.db.write() as session:
        participant = _participant(session, token, lock=True)
        at = where(participant, ctx.study)
        if at.stage == stage and at.step == step:
            apply(session, participant, answer)


async def _checked_form(ctx: Context, request: Request, token: str) -> schemas.Form:
    """The posted form, once the participant's rate limit and the form's CSRF token pass."""
    if not ctx.participant_limiter.allow(token):
        raise PageError(429, "Slow down", "Too many answers in a minute. Wait a moment, then "
                        "reload the page.", **{"Retry-After": "30"})  # fmt: skip
    form = await read_form(request)
    require_csrf(ctx, form, "participant", token)
    return form


async def _answer(
    request: Request, token: str, stage: Stage, parse: Callable[[schemas.Form], A], apply: Apply[A]
) -> RedirectResponse:
    ctx = context(request)
    form = await _checked_form(ctx, request, token)
    try:
        answer = parse(form)
    except schemas.FormError as error:
        raise PageError(400, "Please check your answer", str(error)) from None
    step = form.get("step", [""])[0]
    await ctx.run_write(_store, ctx, token, step, stage, apply, answer)
    return RedirectResponse(f"/p/{token}", status_code=303)


@router.post("/consent")
async def consent(request: Request, token: str) -> RedirectResponse:
    study = context(request).study

    def apply(session: Session, participant: ParticipantRow, agree: bool) -> None:
        if agree:
            crud.consent(session, participant, study)
        else:
            crud.decline(participant)

    return await _answer(request, token, Stage.CONSENT, lambda f: f.get("agree") == ["yes"], apply)


@router.post("/traits")
async def traits(request: Request, token: str) -> RedirectResponse:
    study = context(request).study
    return await _answer(
        request, token, Stage.TRAITS,
        lambda f: schemas.parse_answers(f, study.traits, study.limits.answer_chars),
        lambda _s, participant, answer: crud.save_traits(participant, answer),
    )  # fmt: skip


@router.post("/message")
async def message(request: Request, token: str) -> RedirectResponse:
    ctx = context(request)

    jobs: list[_Job] = []

    def apply(session: Session, participant: ParticipantRow, answer: schemas.MessageAnswer) -> None:
        safety = ctx.study.safety.triggered_by(answer.message)
        crud.add_turn(session, participant, answer, safety_notice=safety)
        jobs.extend(_job(ctx, participant))

    parse = lambda f: schemas.parse_message(f, ctx.study, ctx.taxonomy)  # noqa: E731
    response = await _answer(request, token, Stage.MESSAGE, parse, apply)
    # A stale post stored nothing and made no job; it only shows the current page.
    return _timed(response, await _generate(ctx, token, jobs[0]) if jobs else 0.0)


@router.post("/generate")
async def generate(request: Request, token: str) -> RedirectResponse:
    """Try the replies again after a failed generation (the page offers this button)."""
    ctx = context(request)
    await _checked_form(ctx, request, token)  # rate-limited: each retry calls the models
    return _timed(RedirectResponse(f"/p/{token}", status_code=303), await _generate(ctx, token))


@router.post("/judge")
async def judge(request: Request, token: str) -> RedirectResponse:
    ctx = context(request)
    return await _answer(
        request, token, Stage.JUDGE,
        lambda f: schemas.parse_judge(f, ctx.study, ctx.taxonomy),
        lambda _s, participant, answer: crud.save_judgement(participant.turns[-1], answer),
    )  # fmt: skip


@router.post("/end")
async def end(request: Request, token: str) -> RedirectResponse:
    study = context(request).study

    def apply(_s: Session, participant: ParticipantRow, _answer: None) -> None:
        if may_end(participant, study):
            crud.end_conversation(participant)

    return await _answer(request, token, Stage.MESSAGE, lambda _f: None, apply)


@router.post("/survey")
async def survey(request: Request, token: str) -> RedirectResponse:
    ctx = context(request)
    return await _answer(
        request, token, Stage.SURVEY,
        lambda f: schemas.parse_survey(f, ctx.study, ctx.taxonomy),
        lambda _s, participant, answer: crud.save_survey(participant, answer),
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Job:
    turn: int
    positions: dict[str, str]
    history: list[tuple[str, str]]
    user_text: str
    item_key: str


def _job(ctx: Context, participant: ParticipantRow) -> list[_Job]:
    """The replies a participant waits for: none, or one job for the pending turn."""
    at: Where = where(participant, ctx.study)
    if at.stage != Stage.PENDING or participant.model_first is None:
        return []
    pair = Pair(participant.model_first, str(participant.model_second))
    turn = participant.turns[at.turn]
    return [_Job(at.turn, pair.at_turn(at.turn), history(participant), turn.user_text,
                 f"{participant.public_id}:{at.turn}")]  # fmt: skip


def _pending(ctx: Context, token: str) -> list[_Job]:
    with ctx.db.read() as session:
        return _job(ctx, _participant(session, token))


def _save_replies(ctx: Context, token: str, job: _Job, replies: list[Reply]) -> None:
    with ctx.db.write() as session:
        participant = _participant(session, token, lock=True)
        at = where(participant, ctx.study)
        if at.stage != Stage.PENDING or at.turn != job.turn:
            return  # another request stored this turn's replies first
        turn = participant.turns[at.turn]
        for reply in replies:
            crud.add_reply(turn, reply.position, reply.model, reply.text, reply.flags,
                           reply.latency_ms)  # fmt: skip


async def _generate(ctx: Context, token: str, job: _Job | None = None) -> float:
    """Generate and store the pending turn's replies; returns the time spent on the models."""
    if job is None:
        jobs = await run_in_threadpool(_pending, ctx, token)
        if not jobs:
            return 0.0
        job = jobs[0]
    started = time.perf_counter()
    try:
        replies = await generate_replies(
            ctx.providers, ctx.study, job.positions, job.history, job.user_text, job.item_key
        )
    except GenerationError:
        return time.perf_counter() - started  # the page now offers to try again
    elapsed = time.perf_counter() - started
    await ctx.run_write(_save_replies, ctx, token, job, replies)
    return elapsed


def _timed(response: RedirectResponse, model_s: float) -> RedirectResponse:
    # Server-Timing lets a load test subtract model time; it carries no model identity.
    response.headers["server-timing"] = f"model;dur={model_s * 1000:.1f}"
    return response
