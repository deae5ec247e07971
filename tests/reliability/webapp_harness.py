"""The collection app under `attunebench collect serve` (uvicorn, in its own process, so it can
be killed), and participants that drive the pages over HTTP and remember which answers the
server acknowledged."""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from attunebench.collect import crud
from attunebench.collect.bootstrap import init_database
from attunebench.collect.db import Database, make_engine
from attunebench.collect.models import ParticipantRow
from attunebench.collect.study import parse_study

ADMIN_PASSWORD = "a long admin password"
STUDY: dict[str, Any] = {
    "id": "reliability",
    "name": "Reliability study",
    "consent": "You agree to chat.",
    "instructions": "Write what is on your mind.",
    "models": [
        {"spec": f"mock/{name}", "options": {"outputs": [f"A reply from {name}.", "Tell me more."]}}
        for name in ("first", "second")
    ],
    "turns": {"min": 1, "max": 3},
    "traits": [{"id": "age_band", "text": "Age", "kind": "choice", "options": ["18-30", "31+"]}],
    "end": {"questions": [{"id": "overall", "text": "Overall?", "kind": "scale"}]},
    "limits": {"posts_per_minute": 10_000, "joins_per_minute": 10_000},
    "enrolment": {"open": True, "cap": 10_000, "simulated": True},
}
STATE = {
    "emotions": ["sadness"],
    "primary": "sadness",
    "intensity": "3",
    "valence": "-20",
    "arousal": "50",
}


def join_slug(url: str) -> str:
    """The open link's slug of the study prepared in `url`."""
    database = Database(make_engine(url))
    try:
        with database.read() as session:
            return str(crud.get_meta(session, crud.JOIN_SLUG))
    finally:
        database.dispose()


def prepare(url: str, invitations: int) -> list[str]:
    """Initialise the study in `url`; returns invitation tokens."""
    init_database(url, parse_study(STUDY), "# toml", ADMIN_PASSWORD)
    database = Database(make_engine(url))
    try:
        with database.write() as session:
            return crud.create_invitations(session, invitations)
    finally:
        database.dispose()


def stored(url: str, tokens: list[str]) -> dict[str, ParticipantRow]:
    """Each participant as the database holds it (turns and replies loaded)."""
    database = Database(make_engine(url))
    try:
        with database.read() as session:
            rows = {token: crud.participant_by_token(session, token) for token in tokens}
            for row in rows.values():
                assert row is not None
                for turn in row.turns:
                    list(turn.replies)
            return {token: row for token, row in rows.items() if row is not None}
    finally:
        database.dispose()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LiveApp:
    """`attunebench collect serve` on a free local port, in a process of its own."""

    def __init__(self, url: str, log: Path) -> None:
        self.url, self.log = url, log
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> LiveApp:
        script = Path(sys.executable).with_name("attunebench")
        command = [str(script), "collect", "serve", "--db", self.url, "--port", str(self.port)]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=log, env={**os.environ, "PYTHONUNBUFFERED": "1"}
            )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the app did not start:\n{self.log.read_text()[-2000:]}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush, nothing but what was committed survives."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(15)


def hidden(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no hidden field {name!r} in the page"
    return found.group(1)


@dataclass
class Participant:
    """One participant's browser: follows the pages, keeps what the server acknowledged."""

    base: str
    token: str
    marker: str = field(default_factory=lambda: "m" + secrets.token_hex(8))
    acked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.client = httpx.Client(base_url=self.base, timeout=30)

    def page(self) -> str:
        response = self.client.get(f"/p/{self.token}")
        assert response.status_code == 200, response.status_code
        self.pages.append(response.text)
        return response.text

    def step(self) -> str:
        found = re.search(r'<main data-step="([^"]+)"', self.page())
        assert found, "a participant page without its step"
        return found.group(1)

    def post(self, action: str, data: dict[str, Any]) -> None:
        html = self.pages[-1] if self.pages else self.page()
        form = {"csrf": hidden(html, "csrf"), "step": hidden(html, "step"), **data}
        response = self.client.post(f"/p/{self.token}/{action}", data=form)
        assert response.status_code == 303, (action, response.status_code, response.text[:300])
        self.acked.append((action, {**data, "step": form["step"]}))  # 303: stored

    def next_answer(self) -> tuple[str, dict[str, Any]] | None:
        """The answer for the page the participant is on (None when done)."""
        stage, _, turn = self.step().partition(":")
        answers: dict[str, tuple[str, dict[str, Any]]] = {
            "consent": ("consent", {"agree": "yes"}),
            "traits": ("traits", {"q_age_band": "31+"}),
            "message": (
                "message",
                {
                    "message": f"{self.marker} says hello at turn {turn}",
                    "need": f"{self.marker} needs care",
                    **STATE,
                },
            ),
            "pending": ("generate", {}),
            "judge": (
                "judge",
                {
                    "choice": "AB"[int(turn) % 2],
                    "behaviors_A": ["question"],
                    "behaviors_B": ["suggestion"],
                    "strength": "2",
                },
            ),
            "survey": ("survey", {"q_overall": "4", **STATE}),
        }
        return answers.get(stage)

    def answer(self) -> bool:
        """Answer the current page; False when there is nothing left to answer."""
        upcoming = self.next_answer()
        if upcoming is None:
            return False
        self.post(*upcoming)
        return True

    def close(self) -> None:
        self.client.close()
