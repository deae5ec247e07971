"""The open link, `/join/{slug}`: anyone who has it may enrol, up to the study's cap, after the
optional screening question, and is sent on to a personal link of their own.

The slug is random, so the link reaches only those it was given to. The form acts for nobody
yet, so there is nothing for a CSRF token to protect: enrolments are limited per client address
instead. A screened-out visitor leaves nothing behind, except one sent by a recruitment
platform, whose sealed identifiers (platform.py) refuse the account a second attempt.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from attunebench.collect import crud, ratelimit
from attunebench.collect.deps import Context, PageError, context, read_form, render
from attunebench.collect.platform import Arrival, ArrivalError, arrival_from

router = APIRouter(prefix="/join/{slug}")
FIELD_PREFIX = "platform_"  # the enrolment form carries each identifier as platform_<role>


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


def _arrival(ctx: Context, values: Mapping[str, str], posted: bool) -> Arrival | None:
    """The platform's identifiers, from the link or (`posted`) the enrolment form, where the
    study recruits on one; a page saying what to do when the link lacks them."""
    platform = ctx.study.enrolment.platform
    if platform is None:
        return None
    try:
        roles = platform.params
        return arrival_from(values, {r: FIELD_PREFIX + r for r in roles} if posted else roles)
    except ArrivalError as error:
        raise FromPlatformError(str(error)) from None


class FromPlatformError(Exception):
    """The open link came without the platform's identifiers (or with malformed ones)."""


def from_platform(request: Request, error: Exception) -> Response:
    """The page for a link opened other than from the platform; it names the parameters the
    link needs (in its markup), so `collect simulate` can arrive as the platform would."""
    platform = context(request).study.enrolment.platform
    assert platform is not None
    values = {"platform": platform, "problem": str(error)}
    return render(request, "join/from_platform.html", values, status=400)


def _taken_part(ctx: Context) -> PageError:
    platform = ctx.study.enrolment.platform
    name = platform.shown_name if platform else "this"
    message = (
        f"Each {name} account may take part in this study once, and this one has started it "
        f"before. If you lost your page, write to the researchers: {ctx.study.researcher_contact}"
    )
    return PageError(409, "You have taken part already", message)


def _page(request: Request, slug: str, arrival: Arrival | None, error: str = "") -> HTMLResponse:
    given = {} if arrival is None else asdict(arrival)
    carried = {FIELD_PREFIX + role: value for role, value in given.items()}
    values = {"slug": slug, "error": error, "carried": carried}
    return render(request, "join/join.html", values, status=422 if error else 200)


@router.get("", response_class=HTMLResponse)
def join_page(request: Request, slug: str) -> HTMLResponse:
    ctx = _open(request, slug)
    arrival = _arrival(ctx, request.query_params, posted=False)
    if arrival is not None:
        with ctx.db.read() as session:
            if crud.account_known(session, ctx.platform_keys.account_hash(arrival)):
                raise _taken_part(ctx)
    return _page(request, slug, arrival)


def _enrol(
    session: Session,
    ctx: Context,
    client: str,
    simulated: bool,
    arrival: Arrival | None,
    screened_out: bool,
) -> str | None:
    kept = None
    if arrival is not None:
        keys = ctx.platform_keys
        kept = crud.PlatformArrival(keys.account_hash(arrival), keys.seal(arrival))
    if not ratelimit.allow(session, f"join:{client}", ctx.study.limits.joins_per_minute):
        message = (
            "Too many people joined from this address in a minute. Wait a moment, then try again."
        )
        raise PageError(429, "Slow down", message, **{"Retry-After": "60"})
    try:
        return crud.enrol_open(session, ctx.study, simulated, kept, screened_out)
    except crud.AlreadyTookPartError:
        raise _taken_part(ctx) from None


def _closed(
    request: Request, ctx: Context, arrival: Arrival | None, title: str, message: str, status: int
) -> HTMLResponse:
    """A page that takes nobody in (screened out, or full); a platform's arrival is shown the
    way back to it."""
    values: dict[str, Any] = {"title": title, "message": message}
    platform = ctx.study.enrolment.platform
    if arrival is not None and platform is not None:
        values["back"] = {"url": platform.screened_out_url, "code": platform.screened_out_code}
    return render(request, "join/closed.html", values, status=status)


@router.post("")
async def join(request: Request, slug: str) -> Response:
    ctx = _open(request, slug)
    form = await read_form(request)
    simulated = form.get("simulated") == ["1"]
    if simulated and not ctx.study.enrolment.simulated:
        raise PageError(403, "Not accepted", "This study does not take simulated participants.")
    given = {key: values[0] for key, values in form.items() if values}
    arrival = _arrival(ctx, given, posted=True)
    client = request.client.host if request.client else "?"
    screening = ctx.study.enrolment.screening
    if screening is not None:
        answer = form.get("screening", [""])[0]
        if answer not in screening.options:
            return _page(request, slug, arrival, error="Please answer this question to go on.")
        if answer not in screening.eligible:
            if arrival is not None:
                await ctx.run_write(_enrol, ctx, client, simulated, arrival, True)
            return _closed(request, ctx, arrival, "Thank you", screening.ineligible_message, 200)
    token = await ctx.run_write(_enrol, ctx, client, simulated, arrival, False)
    if token is None:
        message = "Thank you for your interest: every place is taken."
        return _closed(request, ctx, arrival, "The study is full", message, 409)
    return RedirectResponse(f"/p/{token}", status_code=303)
