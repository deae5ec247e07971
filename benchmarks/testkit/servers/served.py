"""Serving a local stand-in's aiohttp app on 127.0.0.1: on the running event loop (`start`,
`stop`), or from a thread of its own as a context manager, so a test can drive a client (or a
subprocess) meanwhile. The fault server and the hosted-API stubs share it.

The hosted-API stubs also share the control and counts of their batch endpoints, under the
test's hand (`ThreadedStub`): `expire` names batches (by the order they were made, from 1) that
end expired with only the first `expire_answered` share of their requests done; with
`fail_every` = n, every n-th other request of a batch fails; `hold_creates()` lets a test kill
a client at a moment when every batch the stub made is known to it; `fail_next` lists statuses
the next live calls get.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Generic, TypeVar

from aiohttp import web

from attunebench.models.batching import request_key

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


R = TypeVar("R")  # a model's rules in the stub's API
B = TypeVar("B", bound="StubBatch")  # a batch as the stub's API keeps it


def tokens(text: str) -> int:
    """A stand-in token count: deterministic, roughly OpenAI's four characters a token."""
    return max(1, len(text) // 4)


def counts_json(counts: Any, leave_out: set[str] | None = None) -> dict[str, Any]:
    """A test server's counts dataclass as JSON: each field as it is, a Counter as a dict."""
    return {
        f.name: dict(value) if isinstance(value := getattr(counts, f.name), Counter) else value
        for f in fields(counts)
        if f.name not in (leave_out or set())
    }


@dataclass
class StubCounts:
    """What a stub saw. Mutated only on the stub's event loop; read with `stats()`."""

    preflight: int = 0  # pre-flight calls (marked by their header)
    live: Counter[str] = field(default_factory=Counter)  # answered live calls, by body
    refused: int = 0  # live calls answered with a 4xx
    rate_limited: int = 0  # live calls answered 429 for want of rate limit
    failed_on_demand: int = 0  # live calls answered with a status from `fail_next`
    batches: int = 0  # batches made
    submitted: Counter[str] = field(default_factory=Counter)  # requests sent in batches, by id
    answered_in_batches: int = 0
    expired: int = 0  # requests a batch did not reach before it expired
    failed_lines: int = 0

    def live_call(self, body: dict[str, Any], preflight: bool, refused: bool) -> None:
        """Count one call to the live endpoint: a pre-flight, a refusal, or an answered call."""
        if preflight:
            self.preflight += 1
        elif refused:
            self.refused += 1
        else:
            self.live[request_key(body)] += 1

    def snapshot(self) -> dict[str, Any]:
        return {
            **counts_json(self),
            "live_calls": sum(self.live.values()),
            "batch_requests": sum(self.submitted.values()),
            "submitted_twice": sum(1 for n in self.submitted.values() if n > 1),
        }


@dataclass(kw_only=True)
class StubBatch(ABC):
    """What the batch controls know a batch by: its id, and the order it was made in (from 1),
    which `held` and `batch_plan` go by. Each stub's batch adds its API's fields."""

    id: str
    ordinal: int

    @abstractmethod
    def view(self, base_url: str) -> dict[str, Any]: ...  # the API's batch object


class ThreadedStub(ServedApp, ABC, Generic[R, B]):
    """A hosted API's stand-in; subclasses give the API's routes and answer by its rules `R`
    for each of its `models`. Batches `B` are created at `batches_path` (`made`), read at
    `.../{id}`, where each read moves one on (`advance`)."""

    def __init__(self, answer: Answerer, models: dict[str, R], batches_path: str) -> None:
        super().__init__()
        self.batches_path = batches_path
        self._answer = answer
        self.models = models
        self.counts = StubCounts()
        self.batches: dict[str, B] = {}
        self.bodies: list[dict[str, Any]] = []  # every live request body, in order
        self.expire: set[int] = set()
        self.expire_answered = 0.5
        self.fail_every = 0
        self.fail_next: list[int] = []
        self._held = False
        self._released_upto = 0  # while held, batches made up to this one proceed

    @abstractmethod
    def api_routes(self, app: web.Application) -> None: ...  # besides the batches' two

    @abstractmethod
    def made(self, body: dict[str, Any], request: web.Request) -> B | web.Response:
        """The batch a create request makes (counted with `count_batch`), or the API's refusal."""

    @abstractmethod
    def advance(self, batch: B) -> None: ...  # as the time between two reads would

    @abstractmethod
    def missing(self, batch_id: str) -> web.Response: ...  # a batch it does not have

    async def _create(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if not await self.through_gate(request):
            return web.Response(status=499)  # its client is gone: as if it never came
        made = self.made(body, request)
        if isinstance(made, web.Response):
            return made
        self.batches[made.id] = made
        return web.json_response(made.view(self.base_url))

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return self.missing(request.match_info["id"])
        self.advance(batch)
        return web.json_response(batch.view(self.base_url))

    def count_batch(self, submitted: list[str]) -> int:
        """Count a batch made with the requests `submitted` (by id); its ordinal."""
        self.counts.batches += 1
        self.counts.submitted.update(submitted)
        return self.counts.batches

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        self.api_routes(app)
        app.router.add_post(self.batches_path, self._create)
        app.router.add_get(f"{self.batches_path}/{{id}}", self._retrieve)
        return app

    def stats(self) -> dict[str, Any]:
        return self.on_loop(self.counts.snapshot)

    def hold_batches(self) -> None:
        self.release_batches(0)  # only those made up to none: all held

    def release_batches(self, upto: int | None = None) -> None:
        """Let every batch proceed, or (`upto`) only those made first, up to that one."""

        def release() -> None:
            self._held = upto is not None
            self._released_upto = upto or 0

        self.on_loop(release)

    # Batch-creating requests wait unanswered (dropped if their client left meanwhile).
    hold_creates = ServedApp.hold
    release_creates = ServedApp.release

    def failure_due(self) -> int | None:
        """The status the next live call is answered with, if `fail_next` holds one."""
        if not self.fail_next:
            return None
        self.counts.failed_on_demand += 1
        return self.fail_next.pop(0)

    def held(self, batch: StubBatch) -> bool:
        """Whether the batch is kept in progress."""
        return self._held and batch.ordinal > self._released_upto

    def batch_plan(self, batch: StubBatch, ids: list[str]) -> tuple[set[str], set[str]]:
        """Of a batch's request ids, counted: those it expires before reaching, and the failing."""
        expired: set[str] = set()
        if batch.ordinal in self.expire:
            expired = set(ids[int(len(ids) * self.expire_answered) :])
        rest = [i for i in ids if i not in expired]
        failing = set(rest[:: self.fail_every]) if self.fail_every else set()
        self.counts.expired += len(expired)
        self.counts.failed_lines += len(failing)
        return expired, failing
