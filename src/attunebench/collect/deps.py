"""What every request handler shares (made once in the app's lifespan), and request helpers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from fastapi import HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from attunebench.collect.db import Database
from attunebench.collect.forms import Form
from attunebench.collect.platform import PlatformKeys
from attunebench.collect.security import Signer
from attunebench.collect.settings import Settings
from attunebench.collect.study import Study
from attunebench.data.schema import Taxonomy
from attunebench.models.base import Provider

T = TypeVar("T")


@dataclass(frozen=True)
class Context:
    settings: Settings
    db: Database
    study: Study
    taxonomy: Taxonomy
    signer: Signer
    providers: dict[str, Provider]
    templates: Jinja2Templates
    join_slug: str | None
    platform_keys: PlatformKeys  # seals and hashes a recruitment platform's identifiers
    # Write transactions wait here, not in the shared thread pool: on SQLite only one can run,
    # and writers blocked inside pool threads would starve the page views queued behind them.
    write_limiter: anyio.CapacityLimiter
    # (token, turn) of each message stored by a post that asked for its replies as a stream
    # and counted the stream against the participant's limit with itself: the stream it opens
    # then writes nothing before its first byte (routers/stream.py). This process's only.
    streams_paid: set[tuple[str, int]] = field(default_factory=set)

    async def run_write(self, action: Callable[..., T], *args: Any) -> T:
        """`action(session, *args)` in one write transaction, committed before this returns, on
        a writer thread (SQLite may wait for its write lock)."""

        def run() -> T:
            with self.db.write() as session:
                return action(session, *args)

        return await anyio.to_thread.run_sync(run, limiter=self.write_limiter)


class PageError(HTTPException):
    """An error shown to a person as a page (participants never see a stack trace or JSON)."""

    def __init__(self, status: int, title: str, message: str, **headers: str) -> None:
        super().__init__(status_code=status, detail=message, headers=headers or None)
        self.title = title
        self.message = message


def context(request: Request) -> Context:
    ctx: Context = request.app.state.collect
    return ctx


def base_url(request: Request) -> str:
    """Where participants reach the app: the configured public address, else this request's."""
    return context(request).settings.base_url.rstrip("/") or str(request.base_url).rstrip("/")


def render(request: Request, name: str, values: dict[str, Any], status: int = 200) -> HTMLResponse:
    templates = context(request).templates
    page: HTMLResponse = templates.TemplateResponse(request, name, values, status_code=status)
    return page


async def read_form(request: Request) -> Form:
    """The posted form as `{field: [values]}`; oversized bodies were refused by the middleware."""
    form = await request.form(max_files=0, max_fields=400)
    return {key: [v for v in form.getlist(key) if isinstance(v, str)] for key in form}


async def checked_form(request: Request, purpose: str, subject: str) -> Form:
    """The posted form, once its CSRF token shows a page made for `purpose` and `subject`."""
    form = await read_form(request)
    if not context(request).signer.check_csrf(purpose, subject, form.get("csrf", [None])[0]):
        raise PageError(
            403, "Form expired", "This form could not be verified. Reload the page and try again."
        )
    return form
