"""A local OpenAI-compatible server that fails a planned share of calls, for testing clients
(what it serves and fails, and its command line: docs/reliability.md).

Whether the n-th attempt of a request (known by its content key) fails, and how, is a hash of
(seed, key, n), so a plan (`FaultPlan`) gives the same faults however calls interleave, in
whatever process, and a resumed run meets the faults the interrupted one would have. It counts
per request content key, so a test can prove a client never repeats a call that succeeded. A
run's pre-flight call (marked by its header) is answered, never faulted, held or counted among
the calls: it belongs to the run's set-up.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from aiohttp import web

from attunebench.models.batching import request_key
from attunebench.models.preflight import PREFLIGHT_HEADER
from testkit.servers.answers import answer_from_prompt
from testkit.servers.served import Answerer, ServedApp, counts_json, serve_until_stopped

FaultKind = Literal[
    "rate_limit", "server_error", "unavailable", "timeout", "disconnect", "malformed", "truncated"
]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)


@dataclass(frozen=True, slots=True)
class FaultPlan:
    fail_rate: float = 0.3  # share of first attempts that fail (and of each retry, up to the cap)
    seed: int = 0
    kinds: tuple[FaultKind, ...] = FAULT_KINDS
    max_faults_per_request: int = 2  # transient: attempt number this many always succeeds
    permanent_rate: float = 0.0  # share of requests refused on every attempt
    permanent_status: int = 400
    permanent_models: tuple[str, ...] = ()  # refuse only requests naming these models (or any)
    retry_after_s: float = 0.0  # the Retry-After a 429 carries
    timeout_s: float = 1.0  # how long a `timeout` holds the request before dropping it

    def __post_init__(self) -> None:
        if not 0 <= self.fail_rate <= 1 or not 0 <= self.permanent_rate <= 1:
            raise ValueError("fail_rate and permanent_rate are shares between 0 and 1")
        unknown = set(self.kinds) - set(FAULT_KINDS)
        if unknown or not self.kinds:
            raise ValueError(f"fault kinds must be some of {', '.join(FAULT_KINDS)}")

    def _unit(self, *parts: object) -> float:
        digest = hashlib.sha256("|".join(map(str, (self.seed, *parts))).encode()).digest()
        return int.from_bytes(digest[:8]) / 2**64

    def is_permanent(self, key: str, model: str = "") -> bool:
        if self.permanent_models and model not in self.permanent_models:
            return False
        return self._unit("permanent", key) < self.permanent_rate

    def fault(self, key: str, attempt: int) -> FaultKind | None:
        """The fault for attempt number `attempt` (from 0) of the request `key`, if any."""
        if attempt >= self.max_faults_per_request or self._unit("fail", key, attempt) >= (
            self.fail_rate
        ):
            return None
        return self.kinds[int(self._unit("kind", key, attempt) * len(self.kinds))]


@dataclass(slots=True)
class FaultCounts:
    """What a fault server saw and did. Mutated only on the server's event loop."""

    requests: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    refused: int = 0  # permanent failures answered
    attempts: Counter[str] = field(default_factory=Counter)  # per request key
    successes: Counter[str] = field(default_factory=Counter)  # per request key

    def snapshot(self) -> dict[str, Any]:
        """A JSON-able copy (the shape of GET /fault/stats)."""
        return {
            **counts_json(self, leave_out={"attempts"}),
            "faults_injected": sum(self.faults.values()),
            # attempts after a call's first: retries after faults, re-sends after a kill
            "retried_requests": sum(n - 1 for n in self.attempts.values()),
            "successful_calls": sum(self.successes.values()),
            "repeated_successful_calls": repeated(self.successes),
        }


def repeated(successes: Counter[str], baseline: Counter[str] | None = None) -> int:
    """Successful calls beyond the first of each key (or beyond `baseline`'s count of it)."""
    base = baseline or Counter()
    return sum(max(0, n - max(1, base[key])) for key, n in successes.items())


def completion(text: str, model: str) -> dict[str, Any]:
    """A chat completion answering `text` whole: the server injects faults and nothing else."""
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": max(1, len(text.split())),
            "total_tokens": 10 + max(1, len(text.split())),
        },
    }


class FaultServer(ServedApp):
    url_suffix = "/v1"

    def __init__(
        self,
        plan: FaultPlan | None = None,
        *,
        answer: Answerer = answer_from_prompt,
        port: int = 0,
        latency_s: float = 0.0,
    ) -> None:
        super().__init__(port)
        self.latency_s = latency_s  # how long each call takes to answer, past the gate
        self.plan = plan or FaultPlan()
        self.counts = FaultCounts()
        self._answer = answer
        self._answering = 0  # successful answers decided but not yet written out
        self._waiting = 0  # requests held at the gate now
        self.received = 0  # chat requests that arrived (pre-flight calls aside)
        self.preflights = 0
        self.model_lists = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._complete)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/fault/stats", self._stats)
        return app

    def stats(self) -> dict[str, Any]:
        """A snapshot of the counts, taken on the server's loop (safe from any thread)."""
        return self.on_loop(self._snapshot)

    def _snapshot(self) -> dict[str, Any]:
        return {
            **self.counts.snapshot(),
            "answering": self._answering,
            "waiting": self._waiting,
            "received": self.received,
            "preflights": self.preflights,
            "model_lists": self.model_lists,
        }

    async def _models(self, request: web.Request) -> web.Response:
        self.model_lists += 1
        return web.json_response({"object": "list", "data": [{"id": "fault", "object": "model"}]})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self._snapshot())

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
            messages = body["messages"]
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": {"message": "not a chat request"}}, status=400)
        if request.headers.get(PREFLIGHT_HEADER):
            self.preflights += 1
            return web.json_response(completion(self._answer(messages), str(body.get("model"))))
        self.received += 1
        self._waiting += 1
        try:
            passed = await self.through_gate(request)
        finally:
            self._waiting -= 1
        if not passed:
            # Its client gave up or was killed while the request was held: answering now
            # would count a success nobody received (and a resumed run would rightly ask
            # again), so it is dropped like a request that never came.
            return web.Response(status=499)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        key = request_key(body)
        attempt = self.counts.attempts[key]
        self.counts.attempts[key] += 1
        self.counts.requests += 1
        if self.plan.is_permanent(key, str(body.get("model", ""))):
            self.counts.refused += 1
            message = {"error": {"message": "this request is refused on every attempt"}}
            return web.json_response(message, status=self.plan.permanent_status)
        fault = self.plan.fault(key, attempt)
        if fault is not None:
            self.counts.faults[fault] += 1
            return await self._fail(request, fault)
        payload = json.dumps(completion(self._answer(messages), str(body.get("model")))).encode()
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.content_length = len(payload)
        self._answering += 1
        try:
            await response.prepare(request)
            await response.write(payload)
            await response.write_eof()
        except ConnectionError:
            return response  # the client hung up first (gave up, or was killed): no success
        finally:
            self._answering -= 1
        self.counts.successes[key] += 1  # counted once the whole answer is on its way
        return response

    async def _fail(self, request: web.Request, fault: FaultKind) -> web.StreamResponse:
        def error(status: int, **headers: str) -> web.Response:
            body = {"error": {"message": f"injected {fault}", "type": fault}}
            return web.json_response(body, status=status, headers=headers)

        if fault == "rate_limit":
            return error(429, **{"Retry-After": f"{self.plan.retry_after_s:g}"})
        if fault == "server_error":
            return error(500)
        if fault == "unavailable":
            return error(503)
        if fault == "malformed":
            return web.Response(text='{"choices": [{"message": ', content_type="application/json")
        if fault == "timeout":
            await asyncio.sleep(self.plan.timeout_s)
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        with contextlib.suppress(ConnectionError):  # a client that has gone needs no hang-up
            if fault == "truncated":
                response.content_length = 200
                await response.prepare(request)
                await response.write(b'{"id": "chatcmpl-fault", "choices": [{"index": 0, ')
            if request.transport is not None:  # timeout, disconnect, truncated: hang up
                request.transport.close()
        return response


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m testkit.servers.fault_server")
    parser.add_argument("--port", type=int, required=True, help="port on 127.0.0.1")
    parser.add_argument("--fail-rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=",".join(FAULT_KINDS), help="comma-separated")
    parser.add_argument("--max-faults-per-request", type=int, default=2)
    parser.add_argument("--permanent-rate", type=float, default=0.0)
    parser.add_argument("--retry-after", type=float, default=0.0, help="seconds, on 429s")
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds a timeout holds")
    args = parser.parse_args(argv)
    plan = FaultPlan(
        fail_rate=args.fail_rate,
        seed=args.seed,
        kinds=tuple(k for k in args.kinds.split(",") if k),
        max_faults_per_request=args.max_faults_per_request,
        permanent_rate=args.permanent_rate,
        retry_after_s=args.retry_after,
        timeout_s=args.timeout,
    )
    serve_until_stopped(
        FaultServer(plan, port=args.port),
        lambda url: f"fault server on {url} (GET /fault/stats for counts)",
    )


if __name__ == "__main__":
    main()
