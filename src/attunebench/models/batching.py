"""Batch APIs behind `generate`: a call joins a queue, goes out in a batch, and is answered
when the batch ends (what is sent when, the token budget, resumes: docs/frontier.md).

A request's key is the SHA-256 of its body and its `custom_id`, so the same request is never
sent twice at once; the journal (`batch_journal`) maps keys to batches, so a resumed run waits
on the batch already holding a request instead of paying twice."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from attunebench.data.jsonl import canonical_json
from attunebench.models.base import BatchCounts, ProviderError
from attunebench.models.batch_journal import Journal

R = TypeVar("R")  # what one answered request is, as the provider's batch API gives it
log = logging.getLogger(__name__)


def request_key(body: Any) -> str:
    """A request's content hash: its journal key and its `custom_id` (64 hex characters)."""
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


@dataclass(frozen=True)  # no slots: the providers' batch_* options default to its fields
class BatchTiming:
    """When a queue sends (quiet `quiet_s`, or waited `wait_s`), how often it polls a batch, and
    after how many failed polls in a row it gives up."""

    quiet_s: float = 2.0
    wait_s: float = 60.0
    poll_s: float = 30.0
    max_poll_errors: int = 20


@dataclass(frozen=True, slots=True)
class BatchLimits:
    max_requests: int
    max_bytes: int
    max_tokens: int | None = None  # input tokens enqueued at once, all batches together


def input_tokens(body: dict[str, Any]) -> int:
    """A generous estimate of a request's input tokens: four characters a token, rounded up."""
    text = canonical_json([body.get("messages"), body.get("system")])
    return -(-len(text) // 4)


@dataclass(frozen=True, slots=True)
class BatchState:
    """A batch as its last poll saw it; `error` says why a batch ended with no results."""

    ended: bool
    status: str
    error: str | None = None


def line_failure(message: str, status: int | None = None) -> ProviderError:
    """A request a batch did not answer: failed now, sent again on resume; permanent only if the
    request itself was refused (a 4xx other than 429)."""
    permanent = status is not None and 400 <= status < 500 and status != 429
    return ProviderError(message, retryable=False, status=status, permanent=permanent)


class BatchAPI(ABC, Generic[R]):
    """One provider's batch endpoints."""

    limits: BatchLimits

    @abstractmethod
    def line_bytes(self, key: str, body: dict[str, Any]) -> int:
        """What the request adds to a batch's size."""

    async def prepare(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> str | None:
        """What is made first and finds the batch again after a kill (OpenAI: its input file)."""
        return None

    @abstractmethod
    async def submit(
        self, requests: Sequence[tuple[str, dict[str, Any]]], prepared: str | None
    ) -> str:
        """Create a batch of (key, body) requests (from what `prepare` made); its id."""

    async def find(self, prepared: str) -> str | None:
        """The batch made from `prepared`, if one was made."""
        return None

    @abstractmethod
    async def state(self, batch_id: str) -> BatchState: ...

    @abstractmethod
    async def results(self, batch_id: str, state: BatchState) -> dict[str, R | ProviderError]:
        """Each request's answer, or why it has none, by key."""


@dataclass(slots=True)
class _Pending:
    body: dict[str, Any]
    size: int
    since: float
    tokens: int = 0


class BatchQueue(Generic[R]):
    """Requests in, batches out; see the module docstring. Used from one event loop."""

    def __init__(self, api: BatchAPI[R], spec: str, timing: BatchTiming = BatchTiming()) -> None:
        self.api = api
        self.spec = spec
        self.journal = Journal(spec)
        self.timing = timing
        self._pending: dict[str, _Pending] = {}
        self._pending_bytes = 0
        self._enqueued: dict[str, int] = {}  # batch id -> its input tokens, while it runs
        self._last_put = 0.0
        self._futures: dict[str, asyncio.Future[R]] = {}
        self._waiting: dict[str, set[str]] = {}  # batch id -> keys awaited from it
        self._ended: dict[str, dict[str, R | ProviderError]] = {}
        self._pollers: dict[str, asyncio.Task[None]] = {}
        self._claims: dict[str, dict[str, dict[str, Any]]] = {}  # prepared -> awaited bodies
        self._tasks: set[asyncio.Task[None]] = set()
        self._flusher: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None

    def attach(self, path: Path) -> None:
        """Keep the journal at `path`, reading the batches already there."""
        self.journal = Journal(self.spec, path)

    def counts(self) -> BatchCounts:
        running = sum(not task.done() for task in self._pollers.values())
        return BatchCounts(
            queued=len(self._pending),
            submitted=len(self._pollers),
            in_progress=running,
            done=len(self._pollers) - running,
        )

    async def request(self, key: str, body: dict[str, Any]) -> R:
        """The answer to `body`, once the batch holding it has ended."""
        future = self._futures.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            future.add_done_callback(_retrieve)
            self._futures[key] = future
            batch_id = self.journal.batch_of.get(key)
            prepared = self.journal.prepared_for(key) if batch_id is None else None
            if batch_id is not None:
                self._follow(batch_id, [key])
            elif prepared is not None:
                self._claim(prepared, key, body)
            else:
                self._enqueue(key, body)
        try:
            return await asyncio.shield(future)
        finally:
            if future.done() and self._futures.get(key) is future:
                del self._futures[key]

    def _enqueue(self, key: str, body: dict[str, Any]) -> None:
        size = self.api.line_bytes(key, body)
        tokens = input_tokens(body)
        budget = self.api.limits.max_tokens
        if size > self.api.limits.max_bytes or (budget is not None and tokens > budget):
            message = f"request of {size} bytes, {tokens} tokens is larger than a batch may be"
            self._settle(key, ProviderError(message, retryable=False))
            return
        now = time.monotonic()
        self._pending[key] = _Pending(body, size, now, tokens)
        self._pending_bytes += size
        self._last_put = now
        if self._flusher is None or self._flusher.done():
            self._wake = asyncio.Event()
            self._flusher = asyncio.create_task(self._flush_loop())
        assert self._wake is not None
        self._wake.set()

    def _due(self) -> float:
        """When the queue goes out unless it fills first."""
        oldest = next(iter(self._pending.values())).since
        return min(self._last_put + self.timing.quiet_s, oldest + self.timing.wait_s)

    def _full(self) -> bool:
        limits = self.api.limits
        return len(self._pending) >= limits.max_requests or self._pending_bytes > limits.max_bytes

    async def _flush_loop(self) -> None:
        assert self._wake is not None
        while True:
            self._wake.clear()
            if not self._pending:
                await self._wake.wait()
                continue
            wait = self._due() - time.monotonic()
            if wait > 0 and not self._full():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), wait)
                continue
            chunk = self._take()
            if not chunk:  # the token budget is spent: wait for a running batch to end
                await self._wake.wait()
                continue
            reserved = f"submitting {chunk[0][0]}"
            # Held from now, before the batch is made, so the next chunk cannot take it too.
            self._enqueued[reserved] = sum(input_tokens(body) for _, body in chunk)
            self._spawn(self._submit(chunk, reserved))

    def _take(self) -> list[tuple[str, dict[str, Any]]]:
        """The oldest requests that fit in one batch and in what is left of the token budget."""
        limits = self.api.limits
        room = (
            None if limits.max_tokens is None else limits.max_tokens - sum(self._enqueued.values())
        )
        chunk: list[tuple[str, dict[str, Any]]] = []
        size = tokens = 0
        for key, pending in self._pending.items():
            if len(chunk) == limits.max_requests or size + pending.size > limits.max_bytes:
                break
            if room is not None and tokens + pending.tokens > room:
                break
            chunk.append((key, pending.body))
            size += pending.size
            tokens += pending.tokens
        for key, _ in chunk:
            self._pending_bytes -= self._pending.pop(key).size
        return chunk

    async def _submit(self, chunk: list[tuple[str, dict[str, Any]]], reserved: str) -> None:
        keys = [key for key, _ in chunk]
        try:
            prepared = await self.api.prepare(chunk)
            if prepared is not None:
                self.journal.record("prepared", "", keys, "prepared", prepared)
            batch_id = await self.api.submit(chunk, prepared)
        except ProviderError as error:  # the engine retries a retryable one, in a new batch
            self._release(reserved)
            for key in keys:
                self._settle(key, error)
            return
        self._enqueued[batch_id] = self._enqueued.pop(reserved)
        self.journal.record("submitted", batch_id, keys, "submitted", prepared)
        log.info("%s: batch %s submitted with %d requests", self.spec, batch_id, len(keys))
        self._follow(batch_id, keys)

    def _claim(self, prepared: str, key: str, body: dict[str, Any]) -> None:
        """Wait for the batch a killed run may have made from `prepared`, if it did."""
        claim = self._claims.get(prepared)
        if claim is None:
            claim = self._claims[prepared] = {}
            self._spawn(self._find(prepared))
        claim[key] = body

    async def _find(self, prepared: str) -> None:
        await asyncio.sleep(0)  # let the other requests of this batch join the claim
        try:
            batch_id = await self.api.find(prepared)
        except ProviderError as error:
            log.warning(
                "%s: cannot look for the batch made from %s: %s", self.spec, prepared, error
            )
            batch_id = None
        claim = self._claims.pop(prepared)
        if batch_id is None:  # never made: its requests go out now
            self.journal.unclaimed.pop(prepared, None)
            for key, body in claim.items():
                self._enqueue(key, body)
            return
        keys = self.journal.unclaimed.get(prepared, tuple(claim))
        self.journal.record("submitted", batch_id, keys, "found", prepared)
        log.info("%s: found batch %s, made before the run was stopped", self.spec, batch_id)
        self._follow(batch_id, list(claim))

    def _follow(self, batch_id: str, keys: Sequence[str]) -> None:
        if batch_id in self._ended:
            for key in keys:
                self._settle(key, self._answer(batch_id, key, self._ended[batch_id]))
            return
        self._waiting.setdefault(batch_id, set()).update(keys)
        if batch_id not in self._pollers:
            self._pollers[batch_id] = self._spawn(self._poll(batch_id))

    async def _poll(self, batch_id: str) -> None:
        errors = 0
        while True:
            try:
                state = await self.api.state(batch_id)
                if state.ended:
                    results = await self.api.results(batch_id, state)
                    break
                errors = 0
            except ProviderError as error:
                errors += 1
                if not error.retryable or errors >= self.timing.max_poll_errors:
                    # The batch may yet end: a later request for it (or a resume) polls again.
                    failure = line_failure(f"cannot poll batch {batch_id}: {error}")
                    del self._pollers[batch_id]
                    self._release(batch_id)
                    for key in self._waiting.pop(batch_id, set()):
                        self._settle(key, failure)
                    return
            await asyncio.sleep(self.timing.poll_s)
        self._ended[batch_id] = results
        self._release(batch_id)
        expected = self.journal.keys_of(batch_id) | self._waiting.get(batch_id, set())
        answered = {k for k, result in results.items() if not isinstance(result, ProviderError)}
        unanswered = sorted(expected - answered)
        self.journal.record("ended", batch_id, unanswered, state.status)
        log.info(
            "%s: batch %s %s, %d of %d answered",
            self.spec,
            batch_id,
            state.status,
            len(expected) - len(unanswered),
            len(expected),
        )
        for key in self._waiting.pop(batch_id, set()):
            self._settle(key, self._answer(batch_id, key, results, state))

    def _answer(
        self,
        batch_id: str,
        key: str,
        results: dict[str, R | ProviderError],
        state: BatchState | None = None,
    ) -> R | ProviderError:
        if key in results:
            return results[key]
        why = (state.error if state else None) or "no result for this request"
        status = state.status if state else "ended"
        return line_failure(f"batch {batch_id} {status}: {why}")

    def _release(self, batch: str) -> None:
        """A batch's tokens no longer count against the budget: wake a waiting flush."""
        if self._enqueued.pop(batch, None) is not None and self._wake is not None:
            self._wake.set()

    def _settle(self, key: str, answer: R | ProviderError) -> None:
        future = self._futures.get(key)
        if future is None or future.done():
            return
        if isinstance(answer, ProviderError):
            future.set_exception(answer)
        else:
            future.set_result(answer)

    def _spawn(self, work: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        """Stop polling; the batches go on, and a resumed run finds them in the journal."""
        tasks = [*self._tasks, *([self._flusher] if self._flusher else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _retrieve(future: asyncio.Future[Any]) -> None:
    # A request whose caller was cancelled still gets its answer or error; reading the error
    # here keeps asyncio from reporting it as never retrieved.
    if not future.cancelled():
        future.exception()
