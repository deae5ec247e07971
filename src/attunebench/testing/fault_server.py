"""A local OpenAI-compatible server that fails a planned share of calls, for testing clients.

It answers POST /v1/chat/completions validly (see `answers.py`), except where its `FaultPlan`
says otherwise. It counts every request, fault and successful completion per request content
key (GET /fault/stats), so a test can prove a client never repeats a call that succeeded. A
run's pre-flight call (marked by its header) is answered, never faulted, held or counted among
the calls: it belongs to the run's set-up.

    with FaultServer(FaultPlan(fail_rate=0.3, seed=1)) as server:
        ...  # point an openai/ model at server.base_url

or `python -m attunebench.testing.fault_server --port 8321 --fail-rate 0.3 --seed 1`.
Binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from attunebench.models.batching import request_key
from attunebench.models.preflight import PREFLIGHT_HEADER
from attunebench.testing.answers import answer_from_prompt
from attunebench.testing.faults import FAULT_KINDS, FaultCounts, FaultKind, FaultPlan
from attunebench.testing.served import Answerer, ServedApp, serve_until_stopped


def completion(text: str, model: str) -> dict[str, Any]:
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
    parser = argparse.ArgumentParser(prog="python -m attunebench.testing.fault_server")
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
