"""The participant's path, under their personal link `/p/{token}`.

`GET /p/{token}` always shows the page for where they are (flow.py). Each answer is a POST
committed before its redirect back to that page, so an acknowledged answer is a stored answer;
one with problems is not stored, and its page comes back (422) with each problem beside its
question. Replies are known to the page only as A and B.
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
    checked_form,
    context,
    render,
)
from attunebench.collect.flow import Stage, may_end, where
from attunebench.collect.generation import GenerationError, Question, generate_replies
from attunebench.collect.models import ParticipantRow, ProbeRow
from attunebench.collect.quality import signals
from attunebench.collect.retest import SWAPPED
from attunebench.collect.schemas import MessageAnswer, ProbeAnswer, SurveyAnswer
from attunebench.collect.security import plausible_token
from attunebench.collect.study import Study
from attunebench.data.schema import Taxonomy

router = APIRouter(prefix="/p/{token}")
A = TypeVar("A")
R = TypeVar("R")
Parse = Callable[[forms.Form, Study, Taxonomy], A]
Apply = Callable[[Session, ParticipantRow, A, Study], R]
Traits = dict[str, str | float]


def participant_of(
    ctx: Context, session: Session, token: str, lock: bool = False
) -> ParticipantRow:
    """The participant a link names (404 otherwise); their retest probes only where the study
    asks questions again, so any other study's pages read them in one query."""
    participant = None
    if plausible_token(token):
        probes = ctx.study.retest.share > 0
        participant = crud.participant_by_token(session, token, lock, probes=probes)
    if participant is None:
        raise PageError(404, "Link not found", "This invitation link is not valid.")
    return participant


def history(participant: ParticipantRow) -> list[tuple[str, str]]:
    """Each picked turn's message and the reply the conversation went on with."""
    return [
        (t.user_text, next(r.text for r in t.replies if r.position == (t.continued or "A")))
        for t in participant.turns
        if t.picked_at is not None
    ]


def _view(ctx: Context, request: Request, token: str) -> dict[str, Any]:
    with ctx.db.read() as session:
        participant = participant_of(ctx, session, token)
    at = where(participant, ctx.study)
    # The conversation and the turn the page shows. A probe shows its turn as it was, the
    # conversation up to it; a pick asked again, the two replies in each other's places.
    shows_turn = at.stage in (Stage.PENDING, Stage.JUDGE, Stage.PROBE)
    current = participant.turns[at.turn] if shows_turn else None
    talk = history(participant)
    replies = [] if current is None else [(r.position, r.text) for r in current.replies]
    if at.stage == Stage.PROBE:
        talk = talk[: at.turn]
        texts = dict(replies)
        replies = [(position, texts[SWAPPED[position]]) for position, _ in replies]
    return {
        "token": token,
        "link": f"{base_url(request)}/p/{token}",
        "deletion_code": participant.deletion_code,
        "csrf": ctx.signer.csrf("participant", token),
        "step": at.step,
        "stage": at.stage.value,
        "turn_number": at.turn + 1,
        "history": talk,
        "current": None if current is None else current.user_text,
        "replies": replies,
        "probe": at.probe,
        "safety_now": at.stage in (Stage.PENDING, Stage.JUDGE)
        and participant.turns[at.turn].safety_notice,
        "may_end": may_end(participant, ctx.study, at),
        # The recruitment platform this participant came from, to be sent back to at the end.
        "platform": ctx.study.enrolment.platform if participant.platform_hash else None,
        "values": {},
        "errors": {},
    }


@router.get("", response_class=HTMLResponse)
def page(request: Request, token: str) -> HTMLResponse:
    view = _view(context(request), request, token)
    return render(request, f"participant/{view['stage']}.html", view)


@router.get("/support", response_class=HTMLResponse)
def support(request: Request, token: str) -> HTMLResponse:
    return render(request, "participant/support.html", _view(context(request), request, token))


@router.post("/leave")
async def leave(request: Request, token: str) -> Response:
    """Leave the study from the support page; a platform's arrival is then shown the way back
    to it as screened out. Finished or declined participants have nothing to leave."""
    ctx = context(request)
    await checked_form(request, "participant", token)

    def apply(session: Session) -> None:
        participant = participant_of(ctx, session, token, lock=True)
        if where(participant, ctx.study).stage not in (Stage.DONE, Stage.DECLINED, Stage.LEFT):
            participant.left_at = crud.now()

    await ctx.run_write(apply)
    return RedirectResponse(f"/p/{token}", status_code=303)


@router.get("/complete")
@router.get("/return")
def back_to_platform(request: Request, token: str) -> RedirectResponse:
    """To the platform's completion URL (`/complete`, finished) or screened-out URL (`/return`,
    declined or left), for a participant it sent who is there; anyone else back to their page."""
    ctx = context(request)
    platform = ctx.study.enrolment.platform
    finished = request.url.path.endswith("/complete")
    with ctx.db.read() as session:
        participant = participant_of(ctx, session, token)
        stage = where(participant, ctx.study).stage
    target = None
    if platform is not None and participant.platform_hash is not None:
        if finished and stage == Stage.DONE:
            target = platform.completion_url
        elif not finished and stage in (Stage.DECLINED, Stage.LEFT):
            target = platform.screened_out_url
    return RedirectResponse(target or f"/p/{token}", status_code=303)


def _store(
    session: Session,
    ctx: Context,
    token: str,
    step: str,
    stage: Stage,
    apply: Apply[A, R],
    answer: A,
    events: int,
) -> R | None:
    """Apply an answer if the participant is still at the step the form was made for (what
    `apply` returned; None for a stale form); the post counts as `events` against the limit."""
    participant = participant_of(ctx, session, token, lock=True)
    _count(ctx, session, participant, events)
    at = where(participant, ctx.study)
    if at.stage != stage or at.step != step:
        return None
    applied = apply(session, participant, answer, ctx.study)
    held = signals(participant, ctx.study.quality) or None
    if held != participant.careless_signals:  # else the flush need not look at the row
        participant.careless_signals = held
    return applied


def count_post(session: Session, ctx: Context, token: str) -> None:
    """Count a post that stores nothing itself (a retry of the replies) against the limit."""
    _count(ctx, session, participant_of(ctx, session, token), events=1)


def _count(ctx: Context, session: Session, participant: ParticipantRow, events: int) -> None:
    """Count `events` posts against the participant's limit, or refuse the request (429)."""
    limit = ctx.study.limits.posts_per_minute
    if not ratelimit.allow(session, f"p:{participant.id}", limit, events=events):
        message = "Too many answers in a minute. Wait a moment, then reload the page."
        raise PageError(429, "Slow down", message, **{"Retry-After": "30"})


def _again(
    ctx: Context, request: Request, token: str, step: str, form: forms.Form, errors: dict[str, str]
) -> Response:
    """The page the form came from, with its problems and the answers as given (422); or, for a
    stale form, just the current page."""
    view = _view(ctx, request, token)
    if view["step"] != step:
        return RedirectResponse(f"/p/{token}", status_code=303)
    view.update(values=form, errors=errors)
    return render(request, f"participant/{view['stage']}.html", view, status=422)


async def _answer(
    request: Request,
    token: str,
    stage: Stage,
    parse: Parse[A],
    apply: Apply[A, R],
) -> tuple[Response, R | None, bool]:
    """Parse and store an answer: the response, what `apply` returned (None if nothing was
    stored) and whether the form asks for the replies as a stream."""
    ctx = context(request)
    form = await checked_form(request, "participant", token)
    step = form.get("step", [""])[0]
    try:
        answer = parse(form, ctx.study, ctx.taxonomy)
    except forms.FormErrors as problems:
        page = await run_in_threadpool(_again, ctx, request, token, step, form, problems.errors)
        return page, None, False
    # A message whose page's script reads the replies as a stream (routers/stream.py) counts
    # the stream with it; without the script, the post generates them whole.
    streamed = form.get("stream") == ["1"]
    events = 2 if streamed else 1
    applied = await ctx.run_write(_store, ctx, token, step, stage, apply, answer, events)
    return RedirectResponse(f"/p/{token}", status_code=303), applied, streamed


def _answers(action: str, stage: Stage, parse: Parse[A], apply: Apply[A, None]) -> None:
    """`POST /p/{token}/{action}`: an answer to the `stage` page, parsed and stored."""

    async def post(request: Request, token: str) -> Response:
        return (await _answer(request, token, stage, parse, apply))[0]

    router.add_api_route(f"/{action}", post, methods=["POST"])


def _consent(session: Session, participant: ParticipantRow, agree: bool, study: Study) -> None:
    if agree:
        crud.consent(session, participant, study)
    else:
        participant.declined_at = crud.now()


def _traits(_s: Session, participant: ParticipantRow, answer: Traits, _study: Study) -> None:
    crud.save_traits(participant, answer)


def _probe(_s: Session, participant: ParticipantRow, answer: ProbeAnswer, study: Study) -> None:
    """An earlier turn's question answered again (retest.py), kept apart from the turn's own
    answers; a pick is stored in the turn's positions (the page showed them swapped)."""
    at = where(participant, study)
    assert at.probe is not None  # the step matched, so the stage is PROBE
    state = None
    if answer.state is not None:
        state = answer.state.model_dump(exclude_none=True, exclude_defaults=True)
    picked = [t.index for t in participant.turns if t.picked_at is not None]
    participant.probes.append(
        ProbeRow(
            turn_index=at.turn,
            asked_after=max(picked, default=at.turn),
            kind=at.probe,
            state=state,
            choice=None if answer.choice is None else SWAPPED[answer.choice],
            created_at=crud.now(),
        )
    )


def _end(_s: Session, participant: ParticipantRow, _answer: None, study: Study) -> None:
    if may_end(participant, study):
        participant.ended_at = crud.now()


def _survey(_s: Session, participant: ParticipantRow, answer: SurveyAnswer, _study: Study) -> None:
    if answer.final_state is not None:
        state = answer.final_state.model_dump(exclude_none=True, exclude_defaults=True)
        participant.final_state = state or None
    participant.survey = dict(answer.answers)
    participant.finished_at = crud.now()


def _agrees(form: forms.Form, _study: Study, _taxonomy: Taxonomy) -> bool:
    return form.get("agree") == ["yes"]


def _nothing(_form: forms.Form, _study: Study, _taxonomy: Taxonomy) -> None:
    return None


_answers("consent", Stage.CONSENT, _agrees, _consent)
_answers("traits", Stage.TRAITS, forms.parse_traits, _traits)
_answers("judge", Stage.JUDGE, forms.parse_judge, crud.save_judgement)
_answers("probe", Stage.PROBE, forms.parse_probe, _probe)
_answers("end", Stage.MESSAGE, _nothing, _end)
_answers("survey", Stage.SURVEY, forms.parse_survey, _survey)


def _message(
    session: Session, participant: ParticipantRow, answer: MessageAnswer, study: Study
) -> Job | None:
    safety = study.safety.triggered_by(answer.message)
    crud.add_turn(session, participant, answer, safety_notice=safety)
    return job_of(study, participant)


@router.post("/message")
async def message(request: Request, token: str) -> Response:
    ctx = context(request)
    answered = await _answer(request, token, Stage.MESSAGE, forms.parse_message, _message)
    response, job, streamed = answered  # a stale or refused post made no job; it shows a page
    if job is not None and streamed:
        # Counted with the stream it opens, which then writes nothing before its first byte:
        # a write waits its turn for SQLite's one writer, and a turn made two of them.
        ctx.streams_paid.add((token, job.turn))
    if job is None or streamed:
        return _timed(response, 0.0)
    return _timed(response, await _generate(ctx, token, job))


@router.post("/generate")
async def generate(request: Request, token: str) -> Response:
    """Try the replies again after a failed generation (the page offers this button)."""
    ctx = context(request)
    await checked_form(request, "participant", token)
    await ctx.run_write(count_post, ctx, token)  # each retry calls the models
    return _timed(RedirectResponse(f"/p/{token}", status_code=303), await _generate(ctx, token))


@dataclass(frozen=True, slots=True)
class Job:
    turn: int
    question: Question


def job_of(study: Study, participant: ParticipantRow) -> Job | None:
    """The replies a participant waits for, if any: the pending turn's."""
    at = where(participant, study)
    if at.stage != Stage.PENDING or participant.model_first is None:
        return None
    pair = Pair(participant.model_first, str(participant.model_second))
    turn = participant.turns[at.turn]
    key = f"{participant.public_id}:{at.turn}"
    question = Question(pair.at_turn(at.turn), history(participant), turn.user_text, key)
    return Job(at.turn, question)


def pending_job(ctx: Context, token: str) -> Job | None:
    with ctx.db.read() as session:
        return job_of(ctx.study, participant_of(ctx, session, token))


async def _generate(ctx: Context, token: str, job: Job | None = None) -> float:
    """Generate and store the pending turn's replies; returns the time spent on the models."""
    job = job or await run_in_threadpool(pending_job, ctx, token)
    if job is None:
        return 0.0
    started = time.perf_counter()
    try:
        replies = await generate_replies(ctx.providers, ctx.study, job.question)
    except GenerationError as error:
        elapsed = time.perf_counter() - started
        await ctx.run_write(crud.record_failures, error.failures)
        return elapsed  # the page now offers to try again
    elapsed = time.perf_counter() - started
    # Unless another request stored this turn's replies first (or the participant left).
    await ctx.run_write(crud.store_pending_replies, token, job.turn, replies)
    return elapsed


def _timed(response: Response, model_s: float) -> Response:
    # Server-Timing lets a load test subtract model time; it carries no model identity.
    response.headers["server-timing"] = f"model;dur={model_s * 1000:.1f}"
    return response
