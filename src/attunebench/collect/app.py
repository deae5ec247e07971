"""The app factory. The database engine and the model providers are made in the lifespan, when
the server starts, never at import, and closed when it stops.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from attunebench.collect.bootstrap import read_stored
from attunebench.collect.db import Database, open_engine
from attunebench.collect.deps import Context, PageError, render
from attunebench.collect.platform import PlatformKeys
from attunebench.collect.pool import close_pool, open_pool
from attunebench.collect.routers import admin, join, participant, site, stream
from attunebench.collect.security import SECURITY_HEADERS, Signer
from attunebench.collect.settings import Settings
from attunebench.collect.templating import make_templates
from attunebench.models.base import Provider

THREADS = 8
RETRY_AFTER_S = 5


# What every page's response carries: the security headers, and no caching.
_PAGE_HEADERS = (*SECURITY_HEADERS, (b"cache-control", b"no-store"))


class SecurityMiddleware:
    """Security headers on every response, no caching of pages, and a cap on request bodies."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] == "POST":
            length = Headers(scope=scope).get("content-length")
            if length is None or not length.isdigit() or int(length) > self.max_body_bytes:
                await Response(status_code=411 if length is None else 413)(scope, receive, send)
                return
        static = scope["path"].startswith("/static/")
        added = SECURITY_HEADERS if static else _PAGE_HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                # The raw header list, extended as it is: every response passes here.
                headers = message.get("headers", [])
                if not static:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                message["headers"] = [*headers, *added]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _page_error(request: Request, error: Exception) -> Response:
    """An error as a page; an HTTPException of the framework's own (an unknown path, a method
    not allowed) gets a title for its status."""
    assert isinstance(error, HTTPException)
    if not isinstance(error, PageError):
        title = {404: "Not found", 405: "Not allowed"}.get(error.status_code, "Error")
        error = PageError(error.status_code, title, title)
    values = {"title": error.title, "message": error.message}
    page = render(request, "error.html", values, status=error.status_code)
    page.headers.update(error.headers or {})
    return page


_INVALID = PageError(400, "Invalid request", "The request could not be read.")
# The database is out of reach (restarting, failing over, every connection busy): a retry page,
# never a 500. Nothing half-done was kept: the transaction rolled back, so an answer is either
# stored and acknowledged, or neither. The engine's pre-ping replaces the dead connections once
# the server is back, without restarting the app.
_UNAVAILABLE = PageError(
    503,
    "Please try again",
    "The study is briefly unavailable. Your answers so far are saved: "
    f"try again in {RETRY_AFTER_S} seconds.",
    **{"Retry-After": str(RETRY_AFTER_S)},
)


def _shown_as(error: PageError) -> Callable[[Request, Exception], Awaitable[Response]]:
    """A handler that answers with `error`'s page, whatever was raised."""

    async def handler(request: Request, _raised: Exception) -> Response:
        return await _page_error(request, error)

    return handler


async def _not_logged_in(request: Request, _error: Exception) -> Response:
    if request.method == "GET":
        return RedirectResponse("/admin/login", status_code=303)
    return await _page_error(request, PageError(401, "Not logged in", "Log in to do this."))


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = Database(open_engine(settings.database_url))
        providers: dict[str, Provider] = {}
        try:
            stored = read_stored(db)
            providers = await open_pool(stored.study)
            secret = settings.secret_key.get_secret_value() if settings.secret_key else None
            taxonomy = stored.study.load_taxonomy()
            app.state.collect = Context(
                settings=settings,
                db=db,
                study=stored.study,
                taxonomy=taxonomy,
                signer=Signer(secret or stored.secret),
                providers=providers,
                templates=make_templates(stored.study, taxonomy),
                join_slug=stored.join_slug,
                # Under the stored secret, never an override: `collect export --payments`
                # opens the identifiers with the database alone.
                platform_keys=PlatformKeys(stored.secret),
                write_limiter=anyio.CapacityLimiter(4 if db.is_sqlite else THREADS),
            )
            # Few request threads: more only contend for the GIL, and a thread holding SQLite's
            # write lock then waits behind them, stalling every writer queued after it.
            anyio.to_thread.current_default_thread_limiter().total_tokens = THREADS
            # What start-up made lives as long as the process: keeping it out of the garbage
            # collector's full passes shortens the pauses those passes add to requests.
            gc.collect()
            gc.freeze()
            yield
        finally:
            await close_pool(providers)
            db.dispose()

    app = FastAPI(
        title="AttuneBench collection",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.add_middleware(SecurityMiddleware, max_body_bytes=settings.max_body_bytes)
    if settings.forwarded_allow_ips:
        # Added last, so it runs first: every handler and limit then sees the forwarded client.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.forwarded_allow_ips)
    app.add_exception_handler(HTTPException, _page_error)  # and PageError, a subclass
    app.add_exception_handler(RequestValidationError, _shown_as(_INVALID))
    for unavailable in (OperationalError, InterfaceError, PoolTimeoutError):
        app.add_exception_handler(unavailable, _shown_as(_UNAVAILABLE))
    app.add_exception_handler(admin.NotLoggedInError, _not_logged_in)
    app.add_exception_handler(join.FromPlatformError, join.from_platform)
    for module in (site, join, participant, stream, admin):
        app.include_router(module.router)
    app.mount("/static", StaticFiles(packages=[("attunebench.collect", "static")]), name="static")
    return app
