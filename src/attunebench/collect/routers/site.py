"""The front page (no study content without a link) and a health check."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from attunebench.collect.deps import context, render

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    return render(request, "index.html", {})


@router.get("/healthz")
def health(request: Request) -> dict[str, bool]:
    with context(request).db.read() as session:
        session.connection()
    return {"ok": True}
