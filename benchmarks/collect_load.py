"""Load on the collection app: many participants at once, each through a whole conversation.

The app runs under uvicorn in a subprocess on 127.0.0.1 with a mock pool of fixed latency. Each
simulated participant (sharing one aiohttp session) consents, gives traits, writes N turns (state,
message, behaviors, pick, wanted text) and the end survey. Per endpoint it reports p50/p99 of the
server's answer time excluding model time (the `model` Server-Timing entry is subtracted), and
afterwards reads the database to count answers that were acknowledged (303) but are missing.
Runs on SQLite, and on PostgreSQL when ATTUNEBENCH_TEST_POSTGRES_URL (or --postgres-url) is
reachable. The last line is JSON: participants, p99_ms (worst endpoint), missing_answers,
database.

    .venv/bin/python benchmarks/collect_load.py [--participants 100] [--turns 6]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy import create_engine, text

from attunebench.collect.bootstrap import init_database
from attunebench.collect.crud import create_invitations, participant_by_token
from attunebench.collect.db import Database, make_engine
from attunebench.collect.study import parse_study

MODEL_LATENCY_S = 0.2
EMOTIONS = ("sadness", "anxiety", "joy", "anger", "relief", "confusion")
BEHAVIORS = ("question", "validation", "suggestion", "reflection", "information")


def study(turns: int, latency_s: float) -> dict[str, Any]:
    return {
        "id": "load-test",
        "name": "Load test",
        "consent": "Load test consent.",
        "instructions": "Load test.",
        "models": [
            {"spec": f"mock/load-{n}", "options": {"latency_s": latency_s,
                                                    "outputs": [f"Scripted reply {n}."]}}
            for n in range(3)
        ],
        "turns": {"min": turns, "max": turns},
        "traits": [{"id": "age", "text": "Age", "kind": "choice", "options": ["a", "b"]}],
        "end": {"questions": [{"id": "overall", "text": "?", "kind": "scale", "required": True}]},
        "limits": {"posts_per_minute": 1000},
    }  # fmt: skip


@dataclass
class Expected:
    """What one participant was told was stored (each 303 to an answer)."""

    token: str
    consented: bool = False
    traits: dict[str, str] | None = None
    turns: list[dict[str, Any]] = field(default_factory=list)
    survey: dict[str, Any] | None = None


Timings = dict[str, list[float]]


def _hidden(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    if not found:
        raise RuntimeError(f"no {name} field in page: {html[:200]!r}")
    return found.group(1)


@dataclass(frozen=True)
class Reply:
    status: int
    text: str


async def _timed(timings: Timings, label: str, call: Any) -> Reply:
    """Send a request (an aiohttp request context) and time it, less the server's model time."""
    started = time.perf_counter()
    async with call as response:
        body = await response.text()
        elapsed_ms = (time.perf_counter() - started) * 1000
        model = re.search(r"model;dur=([\d.]+)", response.headers.get("server-timing", ""))
    timings[label].append(elapsed_ms - (float(model.group(1)) if model else 0.0))
    return Reply(response.status, body)


def _fields(form: dict[str, Any]) -> list[tuple[str, str]]:
    return [(k, v) for k, values in form.items()
            for v in (values if isinstance(values, list) else [values])]  # fmt: skip


async def participant(
    client: aiohttp.ClientSession, token: str, turns: int, n: int, timings: Timings
) -> Expected:
    """One participant's whole session; returns what the server acknowledged."""
    expected = Expected(token)

    async def answer(action: str, data: dict[str, Any]) -> bool:
        page = await _timed(timings, f"GET {action} page", client.get(f"/p/{token}"))
        form = {"csrf": _hidden(page.text, "csrf"), "step": _hidden(page.text, "step"), **data}
        for _attempt in range(3):
            try:
                response = await _timed(timings, f"POST {action}", client.post(
                    f"/p/{token}/{action}", data=_fields(form), allow_redirects=False))  # fmt: skip
            except aiohttp.ClientConnectionError:
                # A dropped connection leaves it unknown whether the answer arrived. Posting
                # the same step again is safe: the app applies a step at most once.
                timings["transport errors"].append(0.0)
                continue
            return response.status == 303
        return False

    expected.consented = await answer("consent", {"agree": "yes"})
    if await answer("traits", {"q_age": "ab"[n % 2]}):
        expected.traits = {"age": "ab"[n % 2]}
    for t in range(turns):
        emotion = EMOTIONS[(n + t) % len(EMOTIONS)]
        message = f"Participant {n}, message {t}: {secrets.token_hex(4)}"
        turn: dict[str, Any] = {"message": message, "emotion": emotion,
                                "intensity": 1 + (n + t) % 5}  # fmt: skip
        state = {"emotions": [emotion], "intensity": str(turn["intensity"]),
                 "valence": "-20", "arousal": "40"}  # fmt: skip
        turn["stored_message"] = await answer("message", {"message": turn["message"], **state})
        turn["choice"] = ("A", "B", "tie")[(n + t) % 3]
        turn["behaviors"] = BEHAVIORS[(n + t) % len(BEHAVIORS)]
        turn["wanted"] = f"wanted {n}-{t}"
        judged = {"choice": turn["choice"], "behaviors_A": [turn["behaviors"]],
                  "behaviors_B": [turn["behaviors"]], "wanted": turn["wanted"]}  # fmt: skip
        turn["stored_judge"] = await answer("judge", judged)
        expected.turns.append(turn)
    if await answer("survey", {"emotions": ["relief"], "intensity": "2", "valence": "10",
                               "arousal": "30", "q_overall": str(1 + n % 5)}):  # fmt: skip
        expected.survey = {"overall": 1 + n % 5}
    return expected


def missing_answers(url: str, everyone: list[Expected]) -> tuple[int, int]:
    """(acknowledged answers, of which missing from the database)."""
    acknowledged = missing = 0
    database = Database(make_engine(url))
    try:
        with database.read() as session:
            for expected in everyone:
                row = participant_by_token(session, expected.token)
                checks: list[bool] = []
                if expected.consented:
                    checks.append(row is not None and row.consented_at is not None)
                if expected.traits is not None:
                    checks.append(row is not None and row.traits == expected.traits)
                stored = {t.index: t for t in (row.turns if row else [])}
                for index, turn in enumerate(expected.turns):
                    got = stored.get(index)
                    if turn["stored_message"]:
                        state = got.state if got is not None else {}
                        checks.append(got is not None and got.user_text == turn["message"]
                                      and state.get("emotions") == [turn["emotion"]]
                                      and state.get("intensity") == turn["intensity"])  # fmt: skip
                    if turn["stored_judge"]:
                        checks.append(got is not None and got.choice == turn["choice"]
                                      and got.wanted == turn["wanted"]
                                      and all(r.behaviors == [turn["behaviors"]]
                                              for r in got.replies))  # fmt: skip
                if expected.survey is not None:
                    checks.append(row is not None and row.survey == expected.survey)
                acknowledged += len(checks)
                missing += checks.count(False)
    finally:
        database.dispose()
    return acknowledged, missing


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _serve(url: str, port: int, log: Path, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "ATTUNEBENCH_COLLECT_DATABASE_URL": url}
    command = [sys.executable, "-m", "uvicorn", "attunebench.collect.app:create_app", "--factory",
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
               "--no-access-log", "--timeout-keep-alive", "120",
               "--workers", str(workers)]  # fmt: skip
    with log.open("wb") as handle:
        return subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT)


async def _wait_ready(base: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    async with aiohttp.ClientSession(base_url=base) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError("the server exited during start-up")
            try:
                async with client.get("/healthz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError("the server did not start in time")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its workers (Linux /proc), to read the figures
    on a shared machine."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return own + sum(_cpu_seconds(int(child)) for child in children)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run_one(name: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    init_database(url, parse_study(study(args.turns, args.latency)), "# load test", None)
    database = Database(make_engine(url))
    with database.write() as session:
        tokens = create_invitations(session, args.participants)
    database.dispose()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = Path(tempfile.gettempdir()) / f"attunebench-collect-load-{name}.log"
    workers = 1 if name == "sqlite" else args.postgres_workers
    process = _serve(url, port, log, workers)
    timings: Timings = defaultdict(list)
    try:
        await _wait_ready(base, process, 60)
        # One session with a connection per participant: participants carry no cookies (the
        # token is in the URL), and separate sessions would each build their own TLS context
        # at the start, inflating the first requests' measured latency with client work.
        connector = aiohttp.TCPConnector(limit=args.participants)
        timeout = aiohttp.ClientTimeout(total=120)
        async with aiohttp.ClientSession(base_url=base, connector=connector,
                                         timeout=timeout) as client:  # fmt: skip
            async with client.get("/") as warm:  # the first page compiles templates: unmeasured
                await warm.text()
            started, client_cpu = time.perf_counter(), time.process_time()
            server_cpu_start = _cpu_seconds(process.pid)
            everyone = await asyncio.wait_for(asyncio.gather(*(
                participant(client, token, args.turns, n, timings)
                for n, token in enumerate(tokens)
            )), timeout=args.timeout)  # fmt: skip
            wall_s = time.perf_counter() - started
            client_cpu_s = time.process_time() - client_cpu
        server_cpu_s = _cpu_seconds(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
    acknowledged, missing = missing_answers(url, everyone)
    print(f"\n{name}: {args.participants} participants x {args.turns} turns in {wall_s:.1f} s "
          f"(model latency {args.latency * 1000:.0f} ms, excluded below); CPU: server "
          f"{server_cpu_s - server_cpu_start:.1f} s, clients {client_cpu_s:.1f} s, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print(f"{'endpoint':<16}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}")
    errors = len(timings.pop("transport errors", []))
    for label, values in sorted(timings.items()):
        print(f"{label:<16}{len(values):>7}{_percentile(values, 0.5):>10.1f}"
              f"{_percentile(values, 0.99):>10.1f}")  # fmt: skip
    print(f"acknowledged answers: {acknowledged}, missing from the database: {missing}; "
          f"dropped connections retried: {errors}")  # fmt: skip
    p99 = max(_percentile(v, 0.99) for v in timings.values())
    return {"database": name, "p99_ms": round(p99, 1), "missing_answers": missing,
            "acknowledged_answers": acknowledged, "wall_s": round(wall_s, 1)}  # fmt: skip


def _postgres_schema(base_url: str) -> tuple[str, str] | None:
    """A fresh schema on the server (URL using it, schema name), or None if unreachable."""
    schema = "load_" + secrets.token_hex(5)
    try:
        engine = create_engine(base_url)
        with engine.begin() as connection:
            connection.execute(text(f"CREATE SCHEMA {schema}"))
        engine.dispose()
    except Exception as error:  # any failure to connect means: not reachable, skip it
        print(f"PostgreSQL at {base_url.split('@')[-1]} not reachable ({type(error).__name__}); "
              "skipping it")  # fmt: skip
        return None
    return f"{base_url}?options=-csearch_path%3D{schema}", schema


def _drop_schema(base_url: str, schema: str) -> None:
    engine = create_engine(base_url)
    with engine.begin() as connection:
        connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    engine.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=100)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--latency", type=float, default=MODEL_LATENCY_S, help="model seconds")
    parser.add_argument("--timeout", type=float, default=600, help="give up after this (s)")
    parser.add_argument("--postgres-url", default=os.environ.get("ATTUNEBENCH_TEST_POSTGRES_URL"))
    parser.add_argument("--postgres-workers", type=int, default=1, help="app processes")
    parser.add_argument("--skip-sqlite", action="store_true")
    args = parser.parse_args()
    results = []
    if not args.skip_sqlite:
        with tempfile.TemporaryDirectory(prefix="attunebench-load-") as folder:
            results.append(await run_one("sqlite", f"sqlite:///{folder}/load.db", args))
    if args.postgres_url:
        made = _postgres_schema(args.postgres_url)
        if made is not None:
            try:
                results.append(await run_one("postgresql", made[0], args))
            finally:
                _drop_schema(args.postgres_url, made[1])
    print(json.dumps({
        "participants": args.participants,
        "p99_ms": max(r["p99_ms"] for r in results),
        "missing_answers": sum(r["missing_answers"] for r in results),
        "database": "+".join(r["database"] for r in results),
        "per_database": results,
    }))  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
