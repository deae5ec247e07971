"""The participant's path, under their personal link `/p/{token}`.

`GET /p/{token}` always shows the page for where they are (see flow.py). Each answer is a POST
that is committed before its redirect back to that page, so an acknowledged answer is a stored
answer. An answer with problems is not stored: the same page comes back (422) with each problem
beside its question and every answer as given. Nothing here names a model: replies are known to
the page only as A and B.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from attunebench.collect import crud, forms, ratelimit
from attunebench.collect.assignment import Pair
from attunebench.collect.deps import (
    Context,
    PageError,
    base_url,
    context,
    read_form,
    render,
    require_csrf,
)
from attunebench.collect.flow import Stage, Where, may_end, where
from attunebench.collect.generation import GenerationError, Question, Reply, generate_replies
from attunebench.collect.models import ParticipantRow, TurnRow
from attunebench.collect.quality import signals
from attunebench.collect.questions import PANAS_ITEMS
from attunebench.collect.retest import SWAPPED, Due
from attunebench.collect.security import plausible_token
from attunebench.collect.wording import label_texts

router = APIRouter(prefix="/p/{token}")
A = TypeVar("A")
Apply = Callable[[Session, ParticipantRow, A], None]


def _not_found() -> PageError:
    return PageError(404, "Link not found", "This invitation link is not valid.")


def slow_down() -> PageError:
    message = "Too many answers in a minute. Wait a moment, then reload the page."
    return PageError(429, "Slow down", message, **{"Retry-After": "30"})


def participant_of(
    session: Session, token: str, probes: bool, lock: bool = False
) -> ParticipantRow:
    """The participant a link names (404 otherwise); with their retest probes if `probes`."""
    participant = None
    if plausible_token(token):
        participant = crud.participant_by_token(session, token, lock, probes=probes)
    if participant is None:
        raise _not_found()
    return participant


def asks_again(ctx: Context) -> bool:
    """Whether the study asks questions again (retest probes): only then are they loaded, so
    every page view and answer of any other study reads the participant in one query."""
    return ctx.study.retest.share > 0


def continued_text(turn: TurnRow) -> str:
    position = turn.continued or "A"
    return next(r.text for r in turn.replies if r.position == position)


def history(participant: ParticipantRow) -> list[tuple[str, str]]:
    return [(t.user_text, continued_text(t)) for t in participant.turns if t.picked_at is not None]


def _shown(participant: ParticipantRow, at: Where) -> dict[str, Any]:
    """The conversation and the turn a page shows. A probe shows its turn as it was, the
    conversation up to it; a pick asked again, the two replies in each other's places."""
    shows_turn = at.stage in (Stage.PENDING, Stage.JUDGE, Stage.PROBE)
    current = participant.turns[at.turn] if shows_turn else None
    talk = history(participant)
    replies = [] if current is None else [(r.position, r.text) for r in current.replies]
    if at.stage == Stage.PROBE:
        talk = talk[: at.turn]
        texts = dict(replies)
        replies = [(position, texts[SWAPPED[position]]) for position, _ in replies]
    return {
        "history": talk,
        "current": None if current is None else current.user_text,
        "replies": replies,
        "probe": at.probe,
    }


def _view(
    ctx: Context, request: Request, participant: ParticipantRow, token: str
) -> dict[str, Any]:
    at = where(participant, ctx.study)
    shown = _shown(participant, at)
    return {
        "token": token,
        "link": f"{base_url(request)}/p/{token}",
        "deletion_code": participant.deletion_code,
        "csrf": ctx.signer.csrf("participant", token),
        "step": at.step,
        "stage": at.stage.value,
        "turn_number": at.turn + 1,
        **shown,
        "safety_now": at.stage in (Stage.PENDING, Stage.JUDGE)
        and participant.turns[at.turn].safety_notice,
        "may_end": may_end(participant, ctx.study, at),
        # The recruitment platform this participant came from, to be sent back to at the end.
        "platform": ctx.study.enrolment.platform if participant.platform_hash else None,
        "taxonomy": ctx.taxonomy,
        "labels": label_texts(ctx.taxonomy),
        "panas_items": PANAS_ITEMS,
        "values": {},
        "errors": {},
    }


@router.get("", response_class=HTMLResponse)
def page(request: Request, token: str) -> HTMLResponse:
    ctx = context(request)
    with ctx.db.read() as session:
        view = _view(ctx, request, participant_of(session, token, asks_again(ctx)), token)
    return render(request, f"participant/{view['stage']}.html", view)


@router.get("/support", response_class=HTMLResponse)
def support(request: Request, token: str) -> HTMLResponse:
    ctx = context(request)
    with ctx.db.read() as session:
        view = _view(ctx, request, participant_of(session, token, asks_again(ctx)), token)
    return render(request, "participant/support.html", view)


@router.post("/leave")
async def leave(request: Request, token: str) -> Response:
    """Leave the study from the support page; a platform's arrival is then shown the way back
    to it as screened out. Finished or declined participants have nothing to leave."""
    ctx = context(request)
    await _checked_form(ctx, request, token)

    def apply(ctx: Context, token: str) -> None:
        with ctx.db.write() as session:
            participant = participant_of(session, token, asks_again(ctx), lock=True)
            stage = where(participant, ctx.study).stage
            if stage not in (Stage.DONE, Stage.DECLINED, Stage.LEFT):
                crud.leave(participant)

    await ctx.run_write(apply, ctx, token)
    return RedirectResponse(f"/p/{token}", status_code=303)


def _platform_redirect(request: Request, token: str, finished: bool) -> RedirectResponse:
    """To the platform's completion URL (finished) or screened-out URL (declined, left), for
    a participant it sent who is there; anyone else back to their page."""
    ctx = context(request)
    platform = ctx.study.enrolment.platform
    with ctx.db.read() as session:
        participant = participant_of(session, token, asks_again(ctx))
        stage = where(participant, ctx.study).stage
    target = None
    if platform is not None and participant.platform_hash is not None:
        if finished and stage == Stage.DONE:
            target = platform.completion_url
        elif not finished and stage in (Stage.DECLINED, Stage.LEFT):
            target = platform.screened_out_url
    return RedirectResponse(target or f"/p/{token}", status_code=303)


@router.get("/complete")
def complete(request: Request, token: str) -> RedirectResponse:
    return _platform_redirect(request, token, finished=True)


@router.get("/return")
def screened_out(request: Request, token: str) -> RedirectResponse:
    return _platform_redirect(request, token, finished=False)


def _store(
    ctx: Context, token: str, step: str, stage: Stage, apply: Apply[A], answer: A, events: int
) -> None:
    """Apply an answer if the participant is still at the step the form was made for; the post
    counts as `events` against the participant's limit."""
    with ctx.db.write() as session:
        participant = participant_of(session, token, asks_again(ctx), lock=True)
        _count(ctx, session, participant, events)
        at = where(participant, ctx.study)
        if at.stage == stage and at.step == step:
            apply(session, participant, answer)
            held = signals(participant, ctx.study.quality) or None
            if held != participant.careless_signals:  # else the flush need not look at the row
                participant.careless_signals = held


def count_post(ctx: Context, token: str) -> None:
    """Count a post that stores nothing itself (a retry of the replies) against the limit."""
    with ctx.db.write() as session:
        _count(ctx, session, participant_of(session, token, asks_again(ctx)), events=1)


def _count(ctx: Context, session: Session, participant: ParticipantRow, events: int) -> None:
    """Count `events` posts against the participant's limit, or refuse the request (429)."""
    limit = ctx.study.limits.posts_per_minute
    if not ratelimit.allow(session, f"p:{participant.id}", limit, events=events):
        raise slow_down()


async def _checked_form(ctx: Context, request: Request, token: str) -> forms.Form:
    form = await read_form(request)
    require_csrf(ctx, form, "participant", token)
    return form


def _again(
    ctx: Context, request: Request, token: str, step: str, form: forms.Form, errors: dict[str, str]
) -> Response:
    """The page the form came from, with its problems and the answers as given (422); or, for a
    stale form, just the current page."""
    with ctx.db.read() as session:
        view = _view(ctx, request, participant_of(session, token, asks_again(ctx)), token)
    if view["step"] != step:
        return RedirectResponse(f"/p/{token}", status_code=303)
    view.update(values=form, errors=errors)
    return render(request, f"participant/{view['stage']}.html", view, status=422)


async def _answer(
    request: Request,
    token: str,
    stage: Stage,
    parse: Callable[[forms.Form], A],
    apply: Apply[A],
    events: Callable[[forms.Form], int] = lambda _form: 1,
) -> Response:
    """Parse and store an answer; the post counts as `events(form)` against the limit."""
    ctx = context(request)
    form = await _checked_form(ctx, request, token)
    step = form.get("step", [""])[0]
    try:
        answer = parse(form)
    except forms.FormErrors as problems:
        return await run_in_threadpool(_again, ctx, request, token, step, form, problems.errors)
    await ctx.run_write(_store, ctx, token, step, stage, apply, answer, events(form))
    return RedirectResponse(f"/p/{token}", status_code=303)


@router.post("/consent")
async def consent(request: Request, token: str) -> Response:
    study = context(request).study

    def apply(session: Session, participant: ParticipantRow, agree: bool) -> None:
        if agree:
            crud.consent(session, participant, study)
        else:
            crud.decline(participant)

    return await _answer(request, token, Stage.CONSENT, lambda f: f.get("agree") == ["yes"], apply)


@router.post("/traits")
async def traits(request: Request, token: str) -> Response:
    study = context(request).study
    return await _answer(
        request,
        token,
        Stage.TRAITS,
        lambda f: forms.parse_traits(f, study),
        lambda _s, participant, answer: crud.save_traits(participant, answer),
    )


def _asks_for_stream(form: forms.Form) -> bool:
    """The page's script asks for the replies as a stream (routers/stream.py) once the message
    is stored; without it, they are generated in the post, whole."""
    return form.get("stream") == ["1"]


@router.post("/message")
async def message(request: Request, token: str) -> Response:
    ctx = context(request)
    jobs: list[Job] = []

    def apply(session: Session, participant: ParticipantRow, answer: Any) -> None:
        safety = ctx.study.safety.triggered_by(answer.message)
        crud.add_turn(session, participant, answer, safety_notice=safety)
        jobs.extend(jobs_of(ctx, participant))

    streamed: list[bool] = []

    def parse(form: forms.Form) -> Any:
        streamed.append(_asks_for_stream(form))
        return forms.parse_message(form, ctx.study, ctx.taxonomy)

    def events(form: forms.Form) -> int:
        # A message that asks for its replies as a stream counts the stream with it.
        return 2 if _asks_for_stream(form) else 1

    response = await _answer(request, token, Stage.MESSAGE, parse, apply, events)
    # A stale or refused post made no job; it only shows a page.
    if jobs and any(streamed):
        # Counted with the stream it opens, which then writes nothing before its first byte:
        # a write waits its turn for SQLite's one writer, and a turn made two of them.
        ctx.streams_paid.add((token, jobs[0].turn))
    if not jobs or any(streamed):
        return _timed(response, 0.0)
    return _timed(response, await _generate(ctx, token, jobs[0]))


@router.post("/generate")
async def generate(request: Request, token: str) -> Response:
    """Try the replies again after a failed generation (the page offers this button)."""
    ctx = context(request)
    await _checked_form(ctx, request, token)
    await ctx.run_write(count_post, ctx, token)  # each retry calls the models
    return _timed(RedirectResponse(f"/p/{token}", status_code=303), await _generate(ctx, token))


@router.post("/judge")
async def judge(request: Request, token: str) -> Response:
    ctx = context(request)

    def apply(session: Session, participant: ParticipantRow, answer: Any) -> None:
        crud.save_judgement(session, participant, participant.turns[-1], answer, ctx.study)

    return await _answer(
        request,
        token,
        Stage.JUDGE,
        lambda f: forms.parse_judge(f, ctx.study, ctx.taxonomy),
        apply,
    )


@router.post("/probe")
async def probe(request: Request, token: str) -> Response:
    """An earlier turn's question answered again (retest.py)."""
    ctx = context(request)

    def apply(_s: Session, participant: ParticipantRow, answer: Any) -> None:
        at = where(participant, ctx.study)
        assert at.probe is not None  # the step matched, so the stage is PROBE
        crud.save_probe(participant, Due(at.turn, at.probe), answer)

    return await _answer(
        request,
        token,
        Stage.PROBE,
        lambda f: forms.parse_probe(f, ctx.study, ctx.taxonomy),
        apply,
    )


@router.post("/end")
async def end(request: Request, token: str) -> Response:
    study = context(request).study

    def apply(_s: Session, participant: ParticipantRow, _answer: None) -> None:
        if may_end(participant, study):
            crud.end_conversation(participant)

    return await _answer(request, token, Stage.MESSAGE, lambda _f: None, apply)


@router.post("/survey")
async def survey(request: Request, token: str) -> Response:
    ctx = context(request)
    return await _answer(
        request,
        token,
        Stage.SURVEY,
        lambda f: forms.parse_survey(f, ctx.study, ctx.taxonomy),
        lambda _s, participant, answer: crud.save_survey(participant, answer),
    )


@dataclass(frozen=True, slots=True)
class Job:
    turn: int
    question: Question


def jobs_of(ctx: Context, participant: ParticipantRow) -> list[Job]:
    """The replies a participant waits for: none, or one job for the pending turn."""
    at = where(participant, ctx.study)
    if at.stage != Stage.PENDING or participant.model_first is None:
        return []
    pair = Pair(participant.model_first, str(participant.model_second))
    turn = participant.turns[at.turn]
    key = f"{participant.public_id}:{at.turn}"
    question = Question(pair.at_turn(at.turn), history(participant), turn.user_text, key)
    return [Job(at.turn, question)]


def pending_jobs(ctx: Context, token: str) -> list[Job]:
    with ctx.db.read() as session:
        return jobs_of(ctx, participant_of(session, token, asks_again(ctx)))


def save_replies(ctx: Context, token: str, job: Job, replies: list[Reply]) -> None:
    """Store the job's replies, unless another request stored this turn's replies first (or
    the participant left meanwhile)."""
    with ctx.db.write() as session:
        crud.store_pending_replies(session, token, job.turn, replies, lock=True)


def save_failures(ctx: Context, failures: dict[str, str]) -> None:
    with ctx.db.write() as session:
        crud.record_failures(session, failures)


async def _generate(ctx: Context, token: str, job: Job | None = None) -> float:
    """Generate and store the pending turn's replies; returns the time spent on the models."""
    if job is None:
        jobs = await run_in_threadpool(pending_jobs, ctx, token)
        if not jobs:
            return 0.0
        job = jobs[0]
    started = time.perf_counter()
    try:
        replies = await generate_replies(ctx.providers, ctx.study, job.question)
    except GenerationError as error:
        elapsed = time.perf_counter() - started
        await ctx.run_write(save_failures, ctx, error.failures)
        return elapsed  # the page now offers to try again
    elapsed = time.perf_counter() - started
    await ctx.run_write(save_replies, ctx, token, job, replies)
    return elapsed


def _timed(response: Response, model_s: float) -> Response:
    # Server-Timing lets a load test subtract model time; it carries no model identity.
    response.headers["server-timing"] = f"model;dur={model_s * 1000:.1f}"
    return response
