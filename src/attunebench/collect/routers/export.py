"""`GET /admin/export.jsonl`: the collected data as validated attunebench/v1 JSON Lines."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from attunebench.collect import crud
from attunebench.collect.deps import Context, PageError, context
from attunebench.collect.export import export_file
from attunebench.collect.routers.admin import AdminSession

router = APIRouter(prefix="/admin")


def _export(ctx: Context, finished_only: bool) -> Path:
    fd, name = tempfile.mkstemp(prefix="attunebench-export-", suffix=".jsonl")
    os.close(fd)
    path = Path(name)
    with ctx.db.read() as session:
        report = export_file(path, crud.all_participants(session), ctx.study, finished_only)
    if report is not None and not report.ok:
        path.unlink()
        problems = "; ".join(str(p) for p in report.problems[:3])
        raise PageError(500, "Export failed validation", problems)
    return path


@router.get("/export.jsonl")
async def export(request: Request, _session: AdminSession, finished: bool = False) -> FileResponse:
    ctx = context(request)
    path = await run_in_threadpool(_export, ctx, finished)
    return FileResponse(
        path,
        media_type="application/x-ndjson",
        filename=f"{ctx.study.id}.jsonl",
        background=BackgroundTask(path.unlink),
    )
