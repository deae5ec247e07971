"""A local mirror of the corpora's upstream files, in the layout `data fetch --mirror` reads:
an upstream `https://HOST/PATH` is served at `/HOST/PATH`, from a corpora folder's copy of it.

Range requests are answered (206), so a client can resume; `cut` plans faults (the first N
responses for a path send half the file and hang up), and `requests` records each request's
path and Range header, so a test can see that a download resumed rather than started over.

    with MirrorServer(mirror_layout(Path("../shared/data"))) as mirror:
        ...  # attunebench data fetch --mirror mirror.base_url

or `python -m testkit.servers.mirror --data ../shared/data --port 8322`. Binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from attunebench.data.sources import sources
from testkit.servers.served import ServedApp, serve_until_stopped


def mirror_path(url: str) -> str:
    """Where the mirror serves an upstream URL: `/HOST/PATH`."""
    parts = urlsplit(url)
    return f"/{parts.netloc}{parts.path}"


def mirror_layout(data: Path, corpora: Sequence[str] | None = None) -> dict[str, Path]:
    """`/HOST/PATH` -> the local copy, for every file of the sources table found under `data`."""
    table = sources().corpora
    layout = {}
    for corpus in corpora if corpora is not None else list(table):
        for source in table[corpus].files:
            local = data / corpus / source.file
            if local.is_file():
                layout[mirror_path(source.url)] = local
    return layout


class MirrorServer(ServedApp):
    def __init__(
        self, files: dict[str, Path], cut: dict[str, int] | None = None, port: int = 0
    ) -> None:
        super().__init__(port)
        self.files = files
        self.cut = dict(cut or {})
        self.requests: list[tuple[str, str | None]] = []  # (path, Range header)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{path:.*}", self._serve)
        return app

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.path, request.headers.get("Range")))
        local = self.files.get(request.path)
        if local is None:
            raise web.HTTPNotFound()
        if self.cut.get(request.path, 0) > 0:
            self.cut[request.path] -= 1
            return await self._cut_halfway(request, local)
        return web.FileResponse(local)

    @staticmethod
    async def _cut_halfway(request: web.Request, local: Path) -> web.StreamResponse:
        data = local.read_bytes()
        response = web.StreamResponse()
        response.content_length = len(data)
        with contextlib.suppress(ConnectionError):
            await response.prepare(request)
            await response.write(data[: len(data) // 2])
            if request.transport is not None:
                request.transport.close()
        return response


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m testkit.servers.mirror")
    parser.add_argument("--data", type=Path, required=True, help="the corpora folder to serve")
    parser.add_argument("--port", type=int, required=True, help="port on 127.0.0.1")
    args = parser.parse_args(argv)
    server = MirrorServer(mirror_layout(args.data), port=args.port)
    serve_until_stopped(server, lambda url: f"mirror of {len(server.files)} files on {url}")


if __name__ == "__main__":
    main()
