"""What the local stand-ins for hosted APIs share besides their serving (`served.py`): the
control and counts of their batch endpoints, under the test's hand.

`expire` names batches (by the order they were made, from 1) that end expired with only the
first `expire_answered` share of their requests done; with `fail_every` = n, every n-th other
request of a batch fails; `hold_creates()` lets a test kill a client at a moment when every
batch the stub made is known to it; `fail_next` lists statuses the next live calls get.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from aiohttp import web

from attunebench.models.batching import request_key
from attunebench.testing.faults import counts_json
from attunebench.testing.served import Answerer, ServedApp

R = TypeVar("R")  # a model's rules in the stub's API
B = TypeVar("B", bound="StubBatch")  # a batch as the stub's API keeps it


def tokens(text: str) -> int:
    """A stand-in token count: deterministic, roughly OpenAI's four characters a token."""
    return max(1, len(text) // 4)


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
        """Of a batch's request ids: those it expires before reaching, and those that fail."""
        expired: set[str] = set()
        if batch.ordinal in self.expire:
            expired = set(ids[int(len(ids) * self.expire_answered) :])
        rest = [i for i in ids if i not in expired]
        failing = set(rest[:: self.fail_every]) if self.fail_every else set()
        return expired, failing
