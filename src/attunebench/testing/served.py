"""Serving a local stand-in's aiohttp app on 127.0.0.1: on the running event loop (`start`,
`stop`), or from a thread of its own as a context manager, so a test can drive a client (or a
subprocess) meanwhile. The fault server and the hosted-API stubs share it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from aiohttp import web

log = logging.getLogger(__name__)
HOST = "127.0.0.1"
# What a stand-in answers a chat with: the reply text for these messages.
Answerer = Callable[[Sequence[dict[str, Any]]], str]
T = TypeVar("T")
S = TypeVar("S", bound="ServedApp")


class ServedApp:
    """Subclasses give `app()` and answer on the server's loop. The gate is open while serving;
    `hold()` makes the requests a subclass passes `through_gate` wait, received but
    unanswered, until `release()`; stopping opens it so that nothing is left waiting."""

    url_suffix = ""  # what follows http://127.0.0.1:PORT in `base_url`

    def __init__(self, port: int = 0) -> None:
        self.base_url = ""
        self._port = port  # 0: a free one
        self._gate: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        raise NotImplementedError

    async def start(self) -> str:
        """Serve on the running event loop; returns the base URL."""
        self._loop = asyncio.get_running_loop()
        self._gate = asyncio.Event()
        self._gate.set()
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await web.TCPSite(self._runner, HOST, self._port).start()
        self.base_url = f"http://{HOST}:{self._runner.addresses[0][1]}{self.url_suffix}"
        return self.base_url

    async def stop(self) -> None:
        if self._gate is not None:
            self._gate.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def __enter__(self: S) -> S:
        started = threading.Event()
        loop = asyncio.new_event_loop()

        def serve() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self.start())
            started.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            pending = asyncio.all_tasks(loop)  # requests still held (a timeout being served)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

        self._thread = threading.Thread(target=serve, name=type(self).__name__, daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError(f"{type(self).__name__} did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def on_loop(self, action: Callable[[], T]) -> T:
        """Run `action` on the server's loop and return what it returns (safe from any thread)."""
        if self._loop is None or self._thread in (None, threading.current_thread()):
            return action()

        async def run() -> T:
            return action()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def hold(self) -> None:
        self.on_loop(lambda: self._gate.clear() if self._gate else None)

    def release(self) -> None:
        self.on_loop(lambda: self._gate.set() if self._gate else None)

    async def through_gate(self, request: web.Request) -> bool:
        """Wait while the gate is held; False if the client left meanwhile (drop its request)."""
        if self._gate is not None:
            await self._gate.wait()
        return request.transport is not None and not request.transport.is_closing()


def serve_until_stopped(server: ServedApp, says: Callable[[str], str]) -> None:
    """Serve `server` until Ctrl-C, logging `says(base_url)` once it listens."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")

    async def serve() -> None:
        log.info(says(await server.start()))
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.Event().wait()
        await server.stop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve())
