"""The researcher's pages under `/admin`, and the collected data as validated attunebench/v1
JSON Lines (`GET /admin/export.jsonl`). Every route but the login form needs a live admin
session (without one, pages redirect to the login form and posts get 401); forms carry a CSRF
token bound to the session.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from attunebench.collect import crud, deps, ratelimit
from attunebench.collect.export import export_file
from attunebench.collect.progress import participant_progress, progress
from attunebench.collect.quality import careless
from attunebench.collect.security import (
    normalise_code,
    token_from_link,
    token_hash,
    verify_password,
)

router = APIRouter(prefix="/admin")

SESSION_COOKIE = "attunebench_admin"
LOGIN_COOKIE = "attunebench_login"
MAX_INVITATIONS = 1000


class NotLoggedInError(Exception):
    """Raised by `admin_session`; the app turns it into a redirect (GET) or 401 (anything else)."""


def admin_session(request: Request) -> str:
    """The current admin session id, or NotLoggedInError."""
    ctx = deps.context(request)
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


def _cookie(response: Response, ctx: deps.Context, name: str, value: str, max_age: int) -> None:
    secure = ctx.settings.cookie_secure
    response.set_cookie(
        name, value, max_age=max_age, path="/admin", secure=secure, httponly=True, samesite="strict"
    )


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, error: str = "") -> HTMLResponse:
    ctx = deps.context(request)
    nonce = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(24)
    values = {"csrf": ctx.signer.csrf("login", nonce), "error": bool(error)}
    page = deps.render(request, "admin/login.html", values)
    _cookie(page, ctx, LOGIN_COOKIE, nonce, max_age=3600)
    return page


def _check_password(ctx: deps.Context, password: str) -> bool:
    with ctx.db.read() as session:
        stored = crud.get_meta(session, crud.ADMIN_PASSWORD)
    return stored is not None and verify_password(stored, password)


def _login_allowed(session: Session, client: str, per_minute: int) -> bool:
    ratelimit.forget_idle(session)  # logins are rare: a good moment to tidy the table
    return ratelimit.allow(session, f"login:{client}", per_minute)


@router.post("/login")
async def login(request: Request) -> RedirectResponse:
    ctx = deps.context(request)
    client = request.client.host if request.client else "?"
    per_minute = ctx.settings.login_attempts_per_minute
    if not await ctx.run_write(_login_allowed, client, per_minute):
        message = "Wait a minute before trying again."
        raise deps.PageError(429, "Too many attempts", message, **{"Retry-After": "60"})
    form = await deps.checked_form(request, "login", request.cookies.get(LOGIN_COOKIE, ""))
    password = form.get("password", [""])[0][:1000]
    if not await run_in_threadpool(_check_password, ctx, password):
        return RedirectResponse("/admin/login?error=1", status_code=303)
    session_id = secrets.token_urlsafe(32)
    await ctx.run_write(crud.open_admin_session, session_id, ctx.settings.session_hours)
    response = RedirectResponse("/admin", status_code=303)
    max_age = round(ctx.settings.session_hours * 3600)
    _cookie(response, ctx, SESSION_COOKIE, ctx.signer.sign_cookie(session_id), max_age)
    return response


@router.post("/logout")
async def logout(request: Request, session_id: AdminSession) -> RedirectResponse:
    await deps.checked_form(request, "admin", session_id)
    await deps.context(request).run_write(crud.close_admin_session, session_id)
    response = RedirectResponse("/admin/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/admin")
    return response


def _page(
    request: Request, session_id: str, name: str, values: dict[str, Any], status: int = 200
) -> HTMLResponse:
    csrf = deps.context(request).signer.csrf("admin", session_id)
    return deps.render(request, name, {"csrf": csrf, **values}, status=status)


def _dashboard(request: Request, session_id: str, lookup_error: str = "") -> HTMLResponse:
    ctx = deps.context(request)
    with ctx.db.read() as session:
        now = progress(session, ctx.study)
    join = f"{deps.base_url(request)}/join/{ctx.join_slug}" if ctx.join_slug else None
    values = {"progress": now, "join_link": join, "lookup_error": lookup_error}
    return _page(request, session_id, "admin/dashboard.html", values, 404 if lookup_error else 200)


@router.get("", response_class=HTMLResponse)
def dashboard(request: Request, session_id: AdminSession) -> HTMLResponse:
    return _dashboard(request, session_id)


def _find(ctx: deps.Context, text: str) -> str | None:
    """The public id of the participant a pasted link (or token) or deletion code names."""
    token, code = token_from_link(text), normalise_code(text)
    with ctx.db.read() as session:
        found = crud.public_id_by(session, token_hash=token_hash(token)) if token else None
        if found is None and code is not None:
            found = crud.public_id_by(session, deletion_code=code)
    return found


@router.post("/lookup", response_model=None)
async def lookup(request: Request, session_id: AdminSession) -> Response:
    """Find a participant from what they quote when they ask for deletion."""
    form = await deps.checked_form(request, "admin", session_id)
    text = form.get("q", [""])[0][:500]
    found = await run_in_threadpool(_find, deps.context(request), text)
    if found is None:
        message = "No participant has that link or deletion code (already deleted?)."
        return await run_in_threadpool(_dashboard, request, session_id, message)
    return RedirectResponse(f"/admin/participants/{found}", status_code=303)


@router.post("/invitations", response_class=HTMLResponse)
async def invitations(request: Request, session_id: AdminSession) -> HTMLResponse:
    ctx = deps.context(request)
    form = await deps.checked_form(request, "admin", session_id)
    try:
        count = int(form.get("count", ["1"])[0])
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_INVITATIONS:
        raise deps.PageError(400, "Invalid count", f"Create between 1 and {MAX_INVITATIONS} links.")
    tokens: list[str] = await ctx.run_write(crud.create_invitations, count)
    links = [f"{deps.base_url(request)}/p/{token}" for token in tokens]
    return _page(request, session_id, "admin/invitations.html", {"links": links})


@router.get("/participants", response_class=HTMLResponse)
def participants(request: Request, session_id: AdminSession) -> HTMLResponse:
    ctx = deps.context(request)
    with ctx.db.read() as session:
        rows = crud.all_participants(session)
        followed = [participant_progress(row, ctx.study) for row in rows]
    values = {"participants": list(zip(rows, followed, strict=True))}
    return _page(request, session_id, "admin/participants.html", values)


@router.get("/participants/{public_id}", response_class=HTMLResponse)
def participant(request: Request, public_id: str, session_id: AdminSession) -> HTMLResponse:
    ctx = deps.context(request)
    with ctx.db.read() as session:
        row = crud.participant_by(session, public_id=public_id)
        if row is None:
            raise deps.PageError(404, "Not found", "No such participant (deleted?).")
    marked = careless(row.careless_signals, ctx.study.quality)
    view = {"p": row, "turns": row.turns, "probes": row.probes, "careless": marked}
    return _page(request, session_id, "admin/participant.html", view)


@router.post("/participants/{public_id}/delete")
async def delete(request: Request, public_id: str, session_id: AdminSession) -> RedirectResponse:
    await deps.checked_form(request, "admin", session_id)
    if not await deps.context(request).run_write(crud.delete_participant, public_id):
        raise deps.PageError(404, "Not found", "No such participant (already deleted?).")
    return RedirectResponse("/admin/participants", status_code=303)


def _export(ctx: deps.Context, finished_only: bool) -> Path:
    fd, name = tempfile.mkstemp(prefix="attunebench-export-", suffix=".jsonl")
    os.close(fd)
    path = Path(name)
    with ctx.db.read() as session:
        report = export_file(path, crud.all_participants(session), ctx.study, finished_only)
    if report is not None and not report.ok:
        path.unlink()
        problems = "; ".join(str(p) for p in report.problems[:3])
        raise deps.PageError(500, "Export failed validation", problems)
    return path


@router.get("/export.jsonl")
async def export(request: Request, _session: AdminSession, finished: bool = False) -> FileResponse:
    ctx = deps.context(request)
    path = await run_in_threadpool(_export, ctx, finished)
    return FileResponse(
        path,
        media_type="application/x-ndjson",
        filename=f"{ctx.study.id}.jsonl",
        background=BackgroundTask(path.unlink),
    )
