"""The researcher's pages under `/admin`: login, progress, invitations, participants, deletion.

Every route but the login form needs a live admin session; without one, pages redirect to the
login form and posts are refused with 401. Forms carry a CSRF token bound to the session.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from attunebench.collect import crud
from attunebench.collect.deps import Context, PageError, context, read_form, render, require_csrf
from attunebench.collect.security import verify_password

router = APIRouter(prefix="/admin")
T = TypeVar("T")

SESSION_COOKIE = "attunebench_admin"
LOGIN_COOKIE = "attunebench_login"
MAX_INVITATIONS = 1000


class NotLoggedInError(Exception):
    """Raised by `admin_session`; the app turns it into a redirect (GET) or 401 (anything else)."""


def admin_session(request: Request) -> str:
    """The current admin session id, or NotLoggedInError."""
    ctx = context(request)
    signed = request.cookies.get(SESSION_COOKIE)
    max_age = round(ctx.settings.session_hours * 3600)
    session_id = ctx.signer.read_cookie(signed, max_age) if signed else None
    if session_id is None:
        raise NotLoggedInError
    with ctx.db.read() as session:
        if not crud.admin_session_valid(session, session_id):
            raise NotLoggedInError
    return session_id


AdminSession = Annotated[str, Depends(admin_session)]


def _cookie(response: Response, ctx: Context, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name, value, max_age=max_age, path="/admin", secure=ctx.settings.cookie_secure,
        httponly=True, samesite="strict",
    )  # fmt: skip


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, error: str = "") -> HTMLResponse:
    ctx = context(request)
    nonce = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(24)
    page = render(request, "admin/login.html",
                  {"csrf": ctx.signer.csrf("login", nonce), "error": bool(error)})  # fmt: skip
    _cookie(page, ctx, LOGIN_COOKIE, nonce, max_age=3600)
    return page


def _check_password(ctx: Context, password: str) -> bool:
    with ctx.db.read() as session:
        stored = crud.get_meta(session, crud.ADMIN_PASSWORD)
    return stored is not None and verify_password(stored, password)


@router.post("/login")
async def login(request: Request) -> RedirectResponse:
    ctx = context(request)
    client = request.client.host if request.client else "?"
    if not ctx.login_limiter.allow(client):
        raise PageError(429, "Too many attempts", "Wait a minute before trying again.",
                        **{"Retry-After": "60"})  # fmt: skip
    form = await read_form(request)
    require_csrf(ctx, form, "login", request.cookies.get(LOGIN_COOKIE, ""))
    password = form.get("password", [""])[0][:1000]
    if not await run_in_threadpool(_check_password, ctx, password):
        return RedirectResponse("/admin/login?error=1", status_code=303)
    session_id = secrets.token_urlsafe(32)
    await _write(ctx, crud.open_admin_session, session_id, ctx.settings.session_hours)
    response = RedirectResponse("/admin", status_code=303)
    max_age = round(ctx.settings.session_hours * 3600)
    _cookie(response, ctx, SESSION_COOKIE, ctx.signer.sign_cookie(session_id), max_age)
    return response


async def _write(ctx: Context, action: Callable[..., T], *args: Any) -> T:
    """Run one write transaction off the event loop (SQLite may wait for its write lock)."""

    def run() -> T:
        with ctx.db.write() as session:
            return action(session, *args)

    return await ctx.run_write(run)


async def _admin_form(request: Request, session_id: str) -> dict[str, list[str]]:
    form = await read_form(request)
    require_csrf(context(request), form, "admin", session_id)
    return dict(form)


@router.post("/logout")
async def logout(request: Request, session_id: AdminSession) -> RedirectResponse:
    await _admin_form(request, session_id)
    await _write(context(request), crud.close_admin_session, session_id)
    response = RedirectResponse("/admin/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/admin")
    return response


def _page(request: Request, session_id: str, name: str, values: dict[str, Any]) -> HTMLResponse:
    return render(request, name, {"csrf": context(request).signer.csrf("admin", session_id),
                                  **values})  # fmt: skip


@router.get("", response_class=HTMLResponse)
def dashboard(request: Request, session_id: AdminSession) -> HTMLResponse:
    ctx = context(request)
    with ctx.db.read() as session:
        progress = crud.progress(session, ctx.study)
    return _page(request, session_id, "admin/dashboard.html", {"progress": progress})


@router.post("/invitations", response_class=HTMLResponse)
async def invitations(request: Request, session_id: AdminSession) -> HTMLResponse:
    ctx = context(request)
    form = await _admin_form(request, session_id)
    try:
        count = int(form.get("count", ["1"])[0])
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_INVITATIONS:
        raise PageError(400, "Invalid count", f"Create between 1 and {MAX_INVITATIONS} links.")
    tokens: list[str] = await _write(ctx, crud.create_invitations, count)
    base = ctx.settings.base_url.rstrip("/") or str(request.base_url).rstrip("/")
    links = [f"{base}/p/{token}" for token in tokens]
    return _page(request, session_id, "admin/invitations.html", {"links": links})


@router.get("/participants", response_class=HTMLResponse)
def participants(request: Request, session_id: AdminSession) -> HTMLResponse:
    ctx = context(request)
    with ctx.db.read() as session:
        rows = crud.all_participants(session)
    return _page(request, session_id, "admin/participants.html", {"participants": rows})


@router.get("/participants/{public_id}", response_class=HTMLResponse)
def participant(request: Request, public_id: str, session_id: AdminSession) -> HTMLResponse:
    ctx = context(request)
    with ctx.db.read() as session:
        row = crud.participant_by_public_id(session, public_id)
        if row is None:
            raise PageError(404, "Not found", "No such participant (deleted?).")
        turns = list(row.turns)
        for turn in turns:
            _ = turn.replies  # load while the session is open
    return _page(request, session_id, "admin/participant.html", {"p": row, "turns": turns})


@router.post("/participants/{public_id}/delete")
async def delete(request: Request, public_id: str, session_id: AdminSession) -> RedirectResponse:
    await _admin_form(request, session_id)
    if not await _write(context(request), crud.delete_participant, public_id):
        raise PageError(404, "Not found", "No such participant (already deleted?).")
    return RedirectResponse("/admin/participants", status_code=303)
