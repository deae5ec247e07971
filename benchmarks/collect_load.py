"""How many participants one collection app process holds at a real participant's pace.

Open loop, as people arrive: simulated participants arrive at random (a Poisson process) and
each goes through a whole study (consent, traits, 6 turns of message and pick, the end survey),
waiting before every answer a think time drawn from 5 to 30 s, as a real participant takes to
read and answer a page. To fit in minutes, every wait (think times and the mock models' 3 s) is
divided by a time factor k (20 by default): n simulated participants then send the requests of
n * k real ones. A level of L real participants is an arrival rate that keeps L of them in the
study on average (Little's law: L divided by a session's mean length); the count seen in the
window is printed beside it. Each level runs until its population is steady, then is measured
for a window; a level is held when the server's answer
times (less model time, from the Server-Timing header) have p99 < 50 ms and no acknowledged
answer (a 303) is missing from the database afterwards. With streaming on (the default, as a
page with its script asks), a message is posted with `stream=1` and its replies read from
`/p/<link>/stream`: that request's time is the time to its first byte less the model's time
to its first token (the mock's latency), the app's own part of the wait. Levels rise until one
is not held. A separate closed loop (participants with no think time) gives the requests per
second at saturation.

SQLite is served by one process; PostgreSQL (`--database postgresql`, at --postgres-url or
ATTUNEBENCH_TEST_POSTGRES_URL) by --workers processes (2 by default). The last line is JSON:
sustained_participants, p99_ms, missing_answers, requests_per_s_at_saturation.

    .venv/bin/python benchmarks/collect_load.py [--database sqlite|postgresql] [--time-factor 20]
        [--level N] [--quick]

`--quick` runs the first level only, at 400 times the pace, measured for 2 s, and a 1 s closed
loop of 4 participants: the same code path, no figure to quote.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy import create_engine, text

from attunebench.collect.bootstrap import init_database
from attunebench.collect.crud import create_invitations, participant_by_token
from attunebench.collect.db import Database, make_engine
from attunebench.collect.study import parse_study

TURNS = 6
THINK_S = (5.0, 30.0)  # a real participant reading and answering one page
MODEL_S = 3.0  # a real model's reply; excluded from the answer times either way
P99_LIMIT_MS = 50.0
LEVELS = (250, 500, 750, 1000, 1250, 1500, 2000, 3000, 4000, 6000)
PAGES = 2 + 2 * TURNS + 1  # consent, traits, a message and a pick per turn, the survey
SESSION_REAL_S = PAGES * sum(THINK_S) / 2 + TURNS * MODEL_S
Acked = list[tuple[str, str, int, dict[str, Any]]]  # token, action, turn, answer: each a 303


def study(latency_s: float) -> dict[str, Any]:
    """examples/study.toml's questions: the light defaults, and each reply's behaviors."""
    models = [
        {"spec": f"mock/load-{n}", "options": {"latency_s": latency_s, "outputs": [f"Hi {n}?"]}}
        for n in range(3)
    ]
    return {
        "id": "load-test",
        "name": "Load test",
        "consent": "Load test consent.",
        "instructions": "Load test.",
        "models": models,
        "questions": {"behaviors": "optional"},
        "turns": {"min": TURNS, "max": TURNS},
        "traits": [{"id": "age", "text": "Age", "kind": "choice", "options": ["a", "b"]}],
        "end": {"questions": [{"id": "overall", "text": "?", "kind": "scale", "required": True}]},
        "limits": {"posts_per_minute": 10_000},  # the limiter still runs; it must not refuse
    }


def pages(n: int) -> list[tuple[str, int, dict[str, Any]]]:
    """What participant n answers, page by page: (action, turn, form)."""
    answers: list[tuple[str, int, dict[str, Any]]] = [
        ("consent", 0, {"agree": "yes"}),
        ("traits", 0, {"q_age": "ab"[n % 2]}),
    ]
    for t in range(TURNS):
        emotion = ("sadness", "anxiety", "joy", "anger", "relief", "confusion")[(n + t) % 6]
        message = f"Participant {n}, message {t}: {secrets.token_hex(4)}"
        state = {"emotions": [emotion], "intensity": str(1 + (n + t) % 5), "need": f"n{n}-{t}"}
        pick = {"choice": ("A", "B", "tie")[(n + t) % 3], "behaviors_A": ["question"]}
        answers += [("message", t, {"message": message, **state}), ("judge", t, pick)]
    return [*answers, ("survey", TURNS, {"emotions": ["relief"], "q_overall": str(1 + n % 5)})]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


class Client:
    """Timed requests: the server's answer time, less model time, of requests in the window."""

    def __init__(
        self, session: aiohttp.ClientSession, first_token_s: float = 0.0, streaming: bool = True
    ) -> None:
        self.session = session
        self.first_token_s = first_token_s  # the mock models' latency before their first word
        self.streaming = streaming
        self.times: list[float] = []
        self.kinds: dict[str, list[float]] = {}
        self.window = (0.0, float("inf"))
        self.acked: Acked = []

    async def send(self, method: str, path: str, form: dict[str, Any] | None = None) -> str:
        items = (form or {}).items()
        fields = [(k, v) for k, vs in items for v in (vs if isinstance(vs, list) else [vs])]
        started = time.perf_counter()
        call = self.session.request(method, path, data=fields or None, allow_redirects=False)
        async with call as response:
            body = await response.text()
            elapsed_ms = (time.perf_counter() - started) * 1000
        model = re.search(r"model;dur=([\d.]+)", response.headers.get("server-timing", ""))
        if self.window[0] <= started <= self.window[1]:
            answer_ms = elapsed_ms - (float(model.group(1)) if model else 0.0)
            self.times.append(answer_ms)
            kind = f"{method} {path.rsplit('/', 1)[-1] if method == 'POST' else 'page'}"
            self.kinds.setdefault(kind, []).append(answer_ms)
        if response.status not in (200, 303):
            raise RuntimeError(f"{method} {path}: {response.status}")
        return body if response.status == 200 else "303"

    async def stream(self, path: str) -> None:
        """The replies as they are written: timed to the first byte, less the model's time to
        its first token; read to the end (the replies are stored before it ends)."""
        started = time.perf_counter()
        async with self.session.get(path) as response:
            first = await response.content.readany()
            elapsed_ms = (time.perf_counter() - started) * 1000
            rest = await response.content.read()
        if self.window[0] <= started <= self.window[1]:
            answer_ms = elapsed_ms - self.first_token_s * 1000
            self.times.append(answer_ms)
            self.kinds.setdefault("GET stream", []).append(answer_ms)
        if response.status != 200 or b"event: done" not in first + rest:
            raise RuntimeError(f"GET {path}: {response.status}, {(first + rest)[-200:]!r}")

    async def participant(self, token: str, n: int, k: float) -> None:
        """One participant's whole session, every wait divided by k."""
        rng = random.Random(n)
        page = await self.send("GET", f"/p/{token}")
        for action, turn, form in pages(n):
            await asyncio.sleep(rng.uniform(*THINK_S) / k)
            hidden = dict(re.findall(r'name="(csrf|step)" value="([^"]*)"', page))
            streamed = self.streaming and action == "message"
            asked = {**hidden, **form, **({"stream": "1"} if streamed else {})}
            if await self.send("POST", f"/p/{token}/{action}", asked) == "303":
                self.acked.append((token, action, turn, form))
            page = await self.send("GET", f"/p/{token}")
            if streamed:
                # The page opens the stream and holds the pick's form, which opens when the
                # replies are whole: a browser loads no other page for the pick.
                await self.stream(f"/p/{token}/stream")


def missing_answers(url: str, acked: Acked) -> int:
    """Acknowledged answers that the database does not hold as they were given."""
    database = Database(make_engine(url))
    missing = 0
    with database.read() as session:
        rows = {token: participant_by_token(session, token) for token, *_ in acked}
        for token, action, t, form in acked:
            row = rows[token]
            turn = row.turns[t] if row is not None and t < len(row.turns) else None
            held = {
                "consent": row is not None and row.consented_at is not None,
                "traits": row is not None and row.traits == {"age": form.get("q_age")},
                "message": turn is not None
                and turn.user_text == form.get("message")
                and turn.state.get("emotions") == form.get("emotions")
                and turn.need_text == form.get("need"),
                "judge": turn is not None
                and turn.choice == form.get("choice")
                and [r.behaviors for r in turn.replies] == [["question"], []],
                "survey": row is not None
                and row.survey == {"overall": int(form.get("q_overall", "0"))},
            }
            missing += not held[action]
    database.dispose()
    return missing


def invite(url: str, count: int) -> list[str]:
    database = Database(make_engine(url))
    with database.write() as session:
        tokens = create_invitations(session, count)
    database.dispose()
    return tokens


@asynccontextmanager
async def serve(url: str, workers: int) -> AsyncIterator[tuple[str, subprocess.Popen[bytes]]]:
    """The app under uvicorn, in processes of its own, on a free local port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    log = Path(tempfile.gettempdir()) / f"attunebench-collect-load-{port}.log"
    command = [sys.executable, "-m", "uvicorn", "attunebench.collect.app:create_app"]
    command += ["--factory", "--port", str(port), "--log-level", "warning", "--no-access-log"]
    command += ["--timeout-keep-alive", "120", "--workers", str(workers)]
    env = {**os.environ, "ATTUNEBENCH_COLLECT_DATABASE_URL": url}
    with log.open("wb") as handle:
        process = subprocess.Popen(command, env=env, stdout=handle, stderr=handle)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession(base_url=base) as client:
            for _ in range(600):
                if process.poll() is not None:
                    raise RuntimeError(f"the server exited; see {log}")
                try:
                    async with client.get("/") as response:  # also compiles the templates
                        if response.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    pass
                await asyncio.sleep(0.1)
        yield base, process
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(cpu_seconds(int(child)) for child in children)


async def open_loop(
    base: str, url: str, level: int, k: float, window_s: float, streaming: bool
) -> dict[str, Any]:
    """`level` real participants arriving at random; measured once their number is steady."""
    rate = level / SESSION_REAL_S  # Little's law; arrivals per second are the same in both clocks
    ramp_s = 1.2 * SESSION_REAL_S / k
    tokens = iter(invite(url, round(rate * (ramp_s + window_s) * 1.5) + 50))
    spans: list[tuple[float, float]] = []
    rng = random.Random(level)
    tasks: list[asyncio.Task[None]] = []
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(base_url=base, connector=connector) as session:
        client = Client(session, MODEL_S / k, streaming)
        start = time.perf_counter()
        client.window = (start + ramp_s, start + ramp_s + window_s)

        async def arrive(n: int) -> None:
            begin = time.perf_counter()
            try:
                await client.participant(next(tokens), n, k)
            finally:
                spans.append((begin, time.perf_counter()))

        while time.perf_counter() < client.window[1]:
            tasks.append(asyncio.create_task(arrive(len(tasks))))
            await asyncio.sleep(rng.expovariate(rate))
        end = time.perf_counter()
        for task in tasks:
            task.cancel()
        errors = [
            r
            for r in await asyncio.gather(*tasks, return_exceptions=True)
            if isinstance(r, Exception) and not isinstance(r, asyncio.CancelledError)
        ]
    if errors:
        raise RuntimeError(f"{len(errors)} participants failed: {errors[0]}")
    low, high = client.window
    held = sum(max(0.0, min(e, high, end) - max(b, low)) for b, e in spans) / (high - low)
    return {
        "real": round(held * k),
        "simulated": held,
        "times": client.times,
        "kinds": {kind: percentile(times, 0.99) for kind, times in sorted(client.kinds.items())},
        "acked": len(client.acked),
        "missing": missing_answers(url, client.acked),
    }


async def closed_loop(
    base: str, url: str, clients: int, seconds: float, first_token_s: float, streaming: bool
) -> float:
    """Requests per second with `clients` participants answering with no think time."""
    tokens = iter(invite(url, 4000))
    async with aiohttp.ClientSession(
        base_url=base, connector=aiohttp.TCPConnector(limit=0)
    ) as session:
        client = Client(session, first_token_s, streaming)

        async def loop(c: int) -> None:
            while True:
                await client.participant(next(tokens), c, float("inf"))

        tasks = [asyncio.create_task(loop(c)) for c in range(clients)]
        await asyncio.sleep(seconds)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return len(client.times) / seconds


async def measure(url: str, args: argparse.Namespace) -> dict[str, Any]:
    k = args.time_factor
    init_database(url, parse_study(study(MODEL_S / k)), "# load test", None)
    workers = 1 if args.database == "sqlite" else args.workers
    best: dict[str, Any] = {"real": 0, "p99": None}
    missing = 0
    async with serve(url, workers) as (base, process):
        levels = [args.level] if args.level else [lv for lv in LEVELS if lv <= args.max_level]
        for level in levels:
            cpu = cpu_seconds(process.pid)
            found = await open_loop(base, url, level, k, args.window, args.streaming)
            p99 = percentile(found["times"], 0.99)
            missing += found["missing"]
            held = p99 < P99_LIMIT_MS and found["missing"] == 0
            print(
                f"level {level:>5}: {found['real']:>5} real participants seen on average "
                f"({found['simulated']:.1f} simulated x {k:g}); {len(found['times'])} "
                f"requests measured, p50 {percentile(found['times'], 0.5):.1f} ms, p99 "
                f"{p99:.1f} ms; {found['acked']} answers acknowledged, {found['missing']} "
                f"missing; server CPU {cpu_seconds(process.pid) - cpu:.1f} s, load average "
                f"{os.getloadavg()[0]:.1f}: {'held' if held else 'not held'}",
                flush=True,
            )
            by_kind = ", ".join(f"{kind} {ms:.1f}" for kind, ms in found["kinds"].items())
            print(f"  p99 ms by request: {by_kind}", flush=True)
            if not held:
                break
            best = {"real": level, "p99": round(p99, 1)}
        cpu = cpu_seconds(process.pid)
        saturation = await closed_loop(
            base, url, args.clients, args.closed_s, MODEL_S / k, args.streaming
        )
        per_request_ms = (cpu_seconds(process.pid) - cpu) * 1000 / (saturation * args.closed_s)
        print(
            f"closed loop, {args.clients} participants with no think time: "
            f"{saturation:.0f} requests/s, server CPU {per_request_ms:.2f} ms a request",
            flush=True,
        )
    return {
        "sustained_participants": best["real"],
        "p99_ms": best["p99"],
        "missing_answers": missing,
        "requests_per_s_at_saturation": round(saturation, 1),
    }


@asynccontextmanager
async def postgres_schema(base_url: str) -> AsyncIterator[str]:
    """A fresh schema on the server, dropped afterwards; yields a URL that uses it."""
    schema = "load_" + secrets.token_hex(5)
    engine = create_engine(base_url, pool_pre_ping=True)  # survives collect_restart's restart
    with engine.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{base_url}?options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as connection:
            connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        engine.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres-url", default=os.environ.get("ATTUNEBENCH_TEST_POSTGRES_URL"))
    parser.add_argument("--workers", type=int, default=2, help="app processes (PostgreSQL)")
    parser.add_argument("--time-factor", type=float, default=20.0, help="waits divided by this")
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured a level")
    parser.add_argument("--max-level", type=int, default=max(LEVELS))
    parser.add_argument("--level", type=int, help="measure this level alone, on a fresh database")
    parser.add_argument("--clients", type=int, default=32, help="closed-loop participants")
    parser.add_argument("--closed-s", type=float, default=15.0, help="closed-loop seconds")
    parser.add_argument("--quick", action="store_true", help="one level, briefly (a smoke run)")
    parser.add_argument(
        "--streaming",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="read the replies as a stream, as a page with its script does (default: on)",
    )
    args = parser.parse_args()
    if args.quick:
        args.max_level, args.time_factor, args.window = min(LEVELS), 400.0, 2.0
        args.clients, args.closed_s = 4, 1.0
    if args.database == "sqlite":
        with tempfile.TemporaryDirectory(prefix="attunebench-load-") as folder:
            figures = await measure(f"sqlite:///{Path(folder) / 'load.db'}", args)
    elif not args.postgres_url:
        parser.error("PostgreSQL needs --postgres-url or ATTUNEBENCH_TEST_POSTGRES_URL")
    else:
        async with postgres_schema(args.postgres_url) as url:
            figures = await measure(url, args)
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
