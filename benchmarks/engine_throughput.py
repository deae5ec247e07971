"""Engine throughput against a local OpenAI-compatible stub with a fixed latency.

Drives CALLS chat completions through the whole engine (`attunebench.engine.run`: dataset
validation, scheduling, cache, retries, ledger, records.jsonl) at CONCURRENCY, and through a
bare aiohttp loop in the same run, first with LATENCY ms per call and then with none (whose
difference per call is the engine's own overhead). Then re-runs the first plan from a full
cache. The stub runs in its own process, pinned to a CPU of its own (`--no-pin` to share them).

    .venv/bin/python benchmarks/engine_throughput.py [--calls N] [--concurrency N] [--latency-ms N]
        [--quick]   (300 calls, concurrency 16, 10 ms: the same path, no figure to quote)

Targets: `ratio_to_ideal` >= 0.9 (ideal = concurrency / latency), `overhead_ms_per_call` < 1.
The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, TCPConnector

from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import Conversation, Source, Turn
from attunebench.data.taxonomy import taxonomy_of
from attunebench.engine import RunConfig, RunResult, run
from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams, Message
from attunebench.models.modelsfile import ModelEntry
from attunebench.prompts import PromptTemplate
from attunebench.tasks.base import AnswerMode, Gold, Item, Output, Query, Scored, Task

TURNS = 10  # turns per conversation: calls / TURNS conversations
REPLY = json.dumps(
    {
        "id": "stub",
        "model": "stub",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": '{"choice": "A"}'},
            }
        ],
        "usage": {"prompt_tokens": 42, "completion_tokens": 5, "total_tokens": 47},
    }
).encode()
PROMPT = PromptTemplate("throughput", "1", "the user's turn, sent as it is", system="", user="")


# -- the stub server (child process) ---------------------------------------------------------

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
CHAT = OK % len(REPLY) + REPLY
MODELS_BODY = b'{"data": [{"id": "stub"}]}'
MODELS = OK % len(MODELS_BODY) + MODELS_BODY
NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"


class StubProtocol(asyncio.Protocol):
    """HTTP/1.1 with keep-alive, just enough for this client: `POST /{ms}/v1/chat/completions`
    answers after that many milliseconds, `GET /{ms}/v1/models` at once.

    Written on a bare asyncio protocol with pre-encoded answers (not aiohttp.web, which costs
    about 0.2 ms of CPU a request): the stub must add as little as it can to the latency it
    is told to keep, or the benchmark measures the stub rather than the engine.
    """

    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = self.buffer[:end].decode("latin-1")
            length = re.search(r"(?im)^content-length:\s*(\d+)", head)
            size = end + 4 + (int(length.group(1)) if length else 0)
            if len(self.buffer) < size:
                return  # the body is still on its way
            self.buffer = self.buffer[size:]
            self.answer(head.split(" ", 2)[1])

    def answer(self, path: str) -> None:
        parts = path.split("/")  # ["", "{ms}", "v1", "chat", "completions"]
        loop = asyncio.get_running_loop()
        if path.endswith("/v1/chat/completions"):
            loop.call_later(int(parts[1]) / 1000, self.write, CHAT)
        elif path.endswith("/v1/models"):
            self.write(MODELS)
        else:
            self.write(NOT_FOUND)

    def write(self, response: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(response)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


def serve(port: int) -> None:
    async def forever() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(StubProtocol, "127.0.0.1", port, backlog=1024)
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        async with server:
            await stop.wait()

    asyncio.run(forever())


@dataclass
class StubServer:
    """The stub in a child process. With `pin`, the stub gets a CPU of its own and this process
    the others, so neither waits for the other to be scheduled off a shared core."""

    pin: bool = True
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    cpus: set[int] = field(default_factory=set)

    def __enter__(self) -> StubServer:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.process = subprocess.Popen([sys.executable, __file__, "--serve", str(self.port)])
        self.cpus = os.sched_getaffinity(0)
        if self.pin and len(self.cpus) >= 2:
            stub_cpu = max(self.cpus)
            os.sched_setaffinity(self.process.pid, {stub_cpu})
            os.sched_setaffinity(0, self.cpus - {stub_cpu})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url(0)}/models", timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the stub server did not start")

    def url(self, latency_ms: int) -> str:
        return f"http://127.0.0.1:{self.port}/{latency_ms}/v1"

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            os.kill(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)
        if self.cpus:
            os.sched_setaffinity(0, self.cpus)


# -- the engine path -------------------------------------------------------------------------


class Echoed(Frozen):
    text: str


class ThroughputTask(Task[Gold, Echoed]):
    """One call per turn, the answer kept as is: the least a task can do."""

    name = "throughput"
    gold_type = Gold
    prediction_type = Echoed

    templates = (PROMPT,)

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item[Gold]]:
        for conversation in conversations:
            taxonomy = taxonomy_of(conversation)
            for turn in conversation.turns:
                yield Item(self.name, conversation, turn.index, "t", taxonomy, Gold())

    def queries(self, item: Item[Gold], mode: AnswerMode) -> list[Query]:
        turn = item.conversation.turns[item.turn_index]
        return [Query("answer", [Message("user", turn.user)], PROMPT.info, GenerateParams())]

    def parse(self, item: Item[Gold], outputs: Mapping[str, Output]) -> Echoed:
        return Echoed(text=outputs["answer"].text or "")

    def score(self, item: Item[Gold], prediction: Echoed) -> Scored:
        return Scored(1.0)

    def worst(self, item: Item[Gold], partial: Echoed | None) -> Scored:
        return Scored(0.0)


def write_data(path: Path, calls: int) -> Path:
    source = Source(kind="simulated", name="throughput")
    write_conversations(
        path,
        (
            Conversation(
                id=f"c{c}",
                source=source,
                taxonomy="attunebench-default",
                turns=tuple(
                    Turn(index=t, user=f"conversation {c}, message {t}") for t in range(TURNS)
                ),
            )
            for c in range(calls // TURNS)
        ),
    )
    return path


async def engine_run(
    data: Path, out: Path, cache: Path, url: str, concurrency: int
) -> tuple[float, RunResult]:
    model = ModelEntry(name="stub", spec="openai/stub", base_url=url, concurrency=concurrency)
    config = RunConfig(data=data, out=out, models=(model,), cache_path=cache, progress=False)
    started = time.perf_counter()
    result = await run(config, tasks=[ThroughputTask()])
    return time.perf_counter() - started, result


# -- the bare loop ---------------------------------------------------------------------------


async def bare_loop(url: str, calls: int, concurrency: int) -> float:
    """The same requests with nothing but aiohttp and a semaphore."""
    slots = asyncio.Semaphore(concurrency)
    headers = {"Content-Type": "application/json"}
    async with ClientSession(connector=TCPConnector(limit=0)) as session:

        async def one(number: int) -> None:
            body = json.dumps(
                {
                    "model": "stub",
                    "max_tokens": 512,
                    "temperature": 0.0,
                    "messages": [{"role": "user", "content": f"message {number}"}],
                }
            )
            async with (
                slots,
                session.post(
                    f"{url}/chat/completions", data=body.encode(), headers=headers
                ) as response,
            ):
                json.loads(await response.read())

        started = time.perf_counter()
        await asyncio.gather(*(one(n) for n in range(calls)))
        return time.perf_counter() - started


# -- main ------------------------------------------------------------------------------------


async def measure(calls: int, concurrency: int, latency_ms: int, pin: bool) -> dict[str, Any]:
    calls -= calls % TURNS
    with StubServer(pin) as stub, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = write_data(root / "data.jsonl", calls)
        engine_s, first = await engine_run(
            data, root / "run", root / "cache.sqlite", stub.url(latency_ms), concurrency
        )
        assert first.complete and first.totals.calls == calls, first
        bare_s = await bare_loop(stub.url(latency_ms), calls, concurrency)
        engine0_s, _ = await engine_run(
            data, root / "run0", root / "cache0.sqlite", stub.url(0), concurrency
        )
        bare0_s = await bare_loop(stub.url(0), calls, concurrency)
        cached_s, cached = await engine_run(
            data, root / "again", root / "cache.sqlite", stub.url(latency_ms), concurrency
        )
    ideal = concurrency / (latency_ms / 1000)
    engine_rate, bare_rate = calls / engine_s, calls / bare_s
    print(f"{calls} calls, concurrency {concurrency}, {latency_ms} ms latency: ideal {ideal:.0f}/s")
    print(f"  engine      {engine_rate:8.1f} calls/s  ({engine_rate / ideal:.3f} of ideal)")
    print(f"  bare aiohttp{bare_rate:8.1f} calls/s  ({bare_rate / ideal:.3f} of ideal)")
    print(
        f"0 ms latency: engine {calls / engine0_s:.1f}/s, bare {calls / bare0_s:.1f}/s, "
        f"engine overhead {(engine0_s - bare0_s) / calls * 1000:.3f} ms/call"
    )
    print(
        f"cached re-run: {cached.totals.calls} calls, {cached.totals.cache_hits} hits, "
        f"{cached_s:.2f} s"
    )
    return {
        "client": "aiohttp",
        "pinned": stub.pin and len(stub.cpus) >= 2,
        "calls": calls,
        "concurrency": concurrency,
        "latency_ms": latency_ms,
        "calls_per_s": round(engine_rate, 1),
        "ideal_calls_per_s": round(ideal, 1),
        "ratio_to_ideal": round(engine_rate / ideal, 3),
        "bare_calls_per_s": round(bare_rate, 1),
        "bare_ratio_to_ideal": round(bare_rate / ideal, 3),
        "zero_latency_calls_per_s": round(calls / engine0_s, 1),
        "zero_latency_bare_calls_per_s": round(calls / bare0_s, 1),
        "overhead_ms_per_call": round((engine0_s - bare0_s) / calls * 1000, 3),
        "cached_rerun_calls": cached.totals.calls,
        "cached_rerun_s": round(cached_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument(
        "--no-pin",
        action="store_true",
        help="let the stub and the client share CPUs as the OS sees fit",
    )
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="300 calls, 16 at once, 10 ms")
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    if args.quick:
        args.calls, args.concurrency, args.latency_ms = 300, 16, 10
    figures = asyncio.run(
        measure(args.calls, args.concurrency, args.latency_ms, pin=not args.no_pin)
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
