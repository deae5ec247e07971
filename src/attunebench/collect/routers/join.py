"""The open link, `/join/{slug}`: anyone who has it may enrol, up to the study's cap, after the
optional screening question, and is sent on to a personal link of their own.

The slug is random (made by `collect init`), so the link reaches only those it was given to.
The form acts for nobody yet (no session, no cookie), so there is nothing for a CSRF token to
protect; enrolments are limited per client address instead, in the database like every limit.
A screened-out visitor leaves nothing behind.
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from attunebench.collect import crud, ratelimit
from attunebench.collect.deps import Context, PageError, context, read_form, render

router = APIRouter(prefix="/join/{slug}")


def _open(request: Request, slug: str) -> Context:
    ctx = context(request)
    expected = ctx.join_slug
    if not (
        ctx.study.enrolment.open
        and expected
        and secrets.compare_digest(slug.encode(), expected.encode())
    ):
        raise PageError(404, "Link not found", "This link is not valid.")
    return ctx


def _page(request: Request, slug: str, answer: str = "", error: str = "") -> HTMLResponse:
    values = {"slug": slug, "answer": answer, "error": error}
    return render(request, "join/join.html", values, status=422 if error else 200)


@router.get("", response_class=HTMLResponse)
def join_page(request: Request, slug: str) -> HTMLResponse:
    _open(request, slug)
    return _page(request, slug)


def _enrol(ctx: Context, client: str, simulated: bool) -> str | None:
    with ctx.db.write() as session:
        if not ratelimit.allow(session, f"join:{client}", ctx.study.limits.joins_per_minute):
            raise PageError(
                429,
                "Slow down",
                "Too many people joined from this address in a "
                "minute. Wait a moment, then try again.",
                **{"Retry-After": "60"},
            )
        return crud.enrol_open(session, ctx.study, simulated)


@router.post("")
async def join(request: Request, slug: str) -> Response:
    ctx = _open(request, slug)
    form = await read_form(request)
    simulated = form.get("simulated") == ["1"]
    if simulated and not ctx.study.enrolment.simulated:
        raise PageError(403, "Not accepted", "This study does not take simulated participants.")
    screening = ctx.study.enrolment.screening
    if screening is not None:
        answer = form.get("screening", [""])[0]
        if answer not in screening.options:
            return _page(request, slug, error="Please answer this question to go on.")
        if answer not in screening.eligible:
            values = {"title": "Thank you", "message": screening.ineligible_message}
            return render(request, "join/closed.html", values)
    client = request.client.host if request.client else "?"
    token = await ctx.run_write(_enrol, ctx, client, simulated)
    if token is None:
        raise PageError(
            409, "The study is full", "Thank you for your interest: every place is taken."
        )
    return RedirectResponse(f"/p/{token}", status_code=303)
