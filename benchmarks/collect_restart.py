"""A study that survives its PostgreSQL server restarting in the middle of it.

Simulated participants take a study served by 2 app processes on PostgreSQL (the study, pages
and answers of `collect_load.py`). Mid-study the script restarts the PostgreSQL server with
Debian's `pg_ctlcluster VERSION CLUSTER restart` (a fast shutdown: every open connection is cut,
every transaction in flight rolled back), as `.ci/run` starts it. Meanwhile a participant must
get a retry page (HTTP 503 with Retry-After), never a 500; they wait as it says and answer
again, as a person would. The app itself is not restarted: its engine's pre-ping replaces the
dead connections once the server is back. Afterwards every acknowledged answer (a 303) must be
in the database as it was given.

`recovered_s` is the time from the restart's start until a page that reads the database is
served again once the restart command has returned (a probe asks every 50 ms). The server
restarted is the cluster listening on the URL's port (`pg_lsclusters`), or `--cluster 15/main`.
It must run as root or postgres, on the database's machine. The last line is JSON:
acknowledged_answers, lost_answers, responses_5xx_other_than_503, recovered_s (and the 503s,
the connection errors, the restart's own time and the app processes replaced).

    .venv/bin/python benchmarks/collect_restart.py [--postgres-url URL] [--participants 40]
        [--quick]

`--quick`: 6 participants, restarted after 0.5 s. Without a server URL, the cluster tools, or
the right to restart it, it exits 77 naming what is missing (`testkit.servers.
prerequisites`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from sqlalchemy.engine import make_url

from attunebench.collect.bootstrap import init_database
from attunebench.collect.study import parse_study
from collect_load import Acked, invite, missing_answers, pages, postgres_schema, serve, study
from testkit import prerequisites

STEP = re.compile(r'<main data-step="([^"]+)"')
HIDDEN = re.compile(r'name="(csrf|step)" value="([^"]*)"')


@dataclass
class Tally:
    statuses: Counter[int] = field(default_factory=Counter)
    connection_errors: int = 0
    acked: Acked = field(default_factory=list)


@dataclass
class Walker:
    """Participants at a quick pace who, given a retry page, wait as it says and go on (and
    given an error page, which is counted, reload it after a second, as a person would)."""

    session: aiohttp.ClientSession
    tally: Tally
    think_s: tuple[float, float]
    retry_scale: float  # Retry-After is multiplied by this (the drill shortens the waits)

    async def send(self, method: str, path: str, form: dict[str, Any] | None = None) -> Any:
        """(status, body, Retry-After) of one request; a failed connection is counted, retried."""
        items = (form or {}).items()
        fields = [(k, v) for k, vs in items for v in (vs if isinstance(vs, list) else [vs])]
        while True:
            try:
                call = self.session.request(
                    method, path, data=fields or None, allow_redirects=False
                )
                async with call as response:
                    body = await response.text()
                    self.tally.statuses[response.status] += 1
                    return response.status, body, response.headers.get("retry-after", "1")
            except aiohttp.ClientConnectionError:
                self.tally.connection_errors += 1
                await asyncio.sleep(0.2)

    async def page(self, token: str) -> str:
        while True:
            status, body, retry = await self.send("GET", f"/p/{token}")
            if status == 200:
                return str(body)
            if status < 500:
                raise RuntimeError(f"GET /p/{token}: {status}")
            await asyncio.sleep(float(retry) * self.retry_scale)  # a 500 is counted, reloaded

    async def answer(self, token: str, action: str, turn: int, form: dict[str, Any]) -> None:
        """Answer one page until it is acknowledged, or until the page shows it was stored by an
        attempt whose acknowledgement was lost (then it is not counted as acknowledged)."""
        expected = f"{action}:{turn}"
        while True:
            html = await self.page(token)
            found = STEP.search(html)
            step = found.group(1) if found else ""
            hidden = dict(HIDDEN.findall(html))
            if step.startswith("pending:"):  # replies not stored yet: ask for them again
                await self.send("POST", f"/p/{token}/generate", hidden)
                continue
            if step != expected:
                return
            status, _, retry = await self.send("POST", f"/p/{token}/{action}", {**hidden, **form})
            if status == 303:
                self.tally.acked.append((token, action, turn, form))
                return
            if status < 500:
                raise RuntimeError(f"POST /p/{token}/{action}: {status}")
            await asyncio.sleep(float(retry) * self.retry_scale)

    async def participant(self, token: str, n: int, start_s: float) -> None:
        rng = random.Random(n)
        await asyncio.sleep(start_s)
        for action, turn, form in pages(n):
            await asyncio.sleep(rng.uniform(*self.think_s))
            await self.answer(token, action, turn, form)


def cluster_of(url: str, given: str | None) -> tuple[str, str]:
    """(version, name) of the cluster to restart: as given, or the one on the URL's port."""
    if given:
        version, _, name = given.partition("/")
        return version, name or "main"
    port = str(make_url(url).port or 5432)
    listing = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True, check=True)
    for line in listing.stdout.splitlines():
        version, name, cluster_port, *_ = line.split()
        if cluster_port == port:
            return version, name
    prerequisites.missing(f"a local PostgreSQL cluster on port {port} (or --cluster VERSION/NAME)")


def workers(pid: int) -> set[int]:
    try:
        return {int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
    except OSError:
        return set()


async def probe(session: aiohttp.ClientSession, token: str, restarted: asyncio.Event) -> float:
    """Seconds from now until a database page is served again after `restarted` is set."""
    begin = time.perf_counter()
    while True:
        asked = time.perf_counter()
        done = restarted.is_set()
        try:
            async with session.get(f"/p/{token}", allow_redirects=False) as response:
                await response.read()
                if done and response.status == 200:
                    return asked - begin
        except aiohttp.ClientConnectionError:
            pass
        await asyncio.sleep(0.05)


async def drill(url: str, args: argparse.Namespace) -> dict[str, Any]:
    version, name = cluster_of(args.postgres_url, args.cluster)
    init_database(url, parse_study(study(0.05)), "# restart drill", None)
    tokens = invite(url, args.participants + 1)
    tally = Tally()
    async with (
        serve(url, args.workers) as (base, process),
        aiohttp.ClientSession(base_url=base, connector=aiohttp.TCPConnector(limit=0)) as session,
    ):
        before = workers(process.pid)
        walker = Walker(session, tally, (0.05, args.think_s), args.retry_scale)
        rng = random.Random(0)
        tasks = [
            asyncio.create_task(walker.participant(token, n, rng.uniform(0, args.spread_s)))
            for n, token in enumerate(tokens[1:])
        ]
        await asyncio.sleep(args.restart_after_s)
        restarted = asyncio.Event()
        recovery = asyncio.create_task(probe(session, tokens[0], restarted))
        began = time.perf_counter()
        command = ["pg_ctlcluster", version, name, "restart"]
        done = await asyncio.create_subprocess_exec(*command)
        if await done.wait() != 0:
            raise SystemExit(f"{' '.join(command)} failed")
        restart_s = time.perf_counter() - began
        restarted.set()
        recovered_s = await asyncio.wait_for(recovery, timeout=120)
        await asyncio.gather(*tasks)
        replaced = len(before - workers(process.pid))
        alive = process.poll() is None
    lost = missing_answers(url, tally.acked)
    other = sum(n for status, n in tally.statuses.items() if status >= 500 and status != 503)
    print(f"statuses {dict(sorted(tally.statuses.items()))}; app alive throughout: {alive}")
    return {
        "acknowledged_answers": len(tally.acked),
        "lost_answers": lost,
        "responses_5xx_other_than_503": other,
        "recovered_s": round(recovered_s, 2),
        "responses_503": tally.statuses[503],
        "connection_errors": tally.connection_errors,
        "restart_s": round(restart_s, 2),
        "app_processes_replaced": replaced + (not alive),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres-url", default=os.environ.get("ATTUNEBENCH_TEST_POSTGRES_URL"))
    parser.add_argument("--cluster", help="VERSION/NAME to restart (default: the URL's port)")
    parser.add_argument("--workers", type=int, default=2, help="app processes")
    parser.add_argument("--participants", type=int, default=40)
    parser.add_argument("--think-s", type=float, default=0.3, help="longest wait before an answer")
    parser.add_argument("--spread-s", type=float, default=4.0, help="arrivals spread over this")
    parser.add_argument("--restart-after-s", type=float, default=2.0)
    parser.add_argument("--retry-scale", type=float, default=0.1, help="Retry-After x this")
    parser.add_argument("--quick", action="store_true", help="6 participants, a brief drill")
    args = parser.parse_args()
    if args.quick:
        args.participants, args.spread_s, args.restart_after_s, args.think_s = 6, 1.0, 0.5, 0.1
    args.postgres_url = prerequisites.postgres_url(args.postgres_url)
    prerequisites.local_postgres_admin()
    async with postgres_schema(args.postgres_url) as url:
        figures = await drill(url, args)
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
