"""Helpers for the collection tests: the test study, invitations, a participant driver."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi.testclient import TestClient

from attunebench.collect.crud import create_invitations
from attunebench.collect.db import Database, make_engine
from attunebench.collect.questions import PANAS_ITEMS as PANAS
from attunebench.collect.study import Study

ADMIN_PASSWORD = "correct horse battery"
# The `serve` fixture: starts the app for a study, gives (base URL, database URL).
Serve = Callable[[Study], tuple[str, str]]

# Distinctive names, so a leak of any of them into a page cannot hide behind common words.
POOL = ("mock/zeta-listener-7", "mock/omega-fixer-9", "mock/kappa-asker-3")


def study_data(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "test-study",
        "name": "Test chat study",
        "consent": "You agree to chat.\n\nYou may stop at any time.",
        "instructions": "Write what is on your mind.",
        "researcher_contact": "study-team@example.org",
        "models": [
            {
                "spec": spec,
                "options": {
                    "outputs": [
                        f"Reply number {n} from this side.",
                        f"Another answer, variant {n}.",
                    ]
                },
            }
            for n, spec in enumerate(POOL)
        ],
        "turns": {"min": 2, "max": 3},
        # Every question, so every path of the forms is exercised.
        "questions": {
            "valence": "optional",
            "arousal": "optional",
            "panas": "required",
            "need_behaviors": "optional",
            "behaviors": "optional",
            "comment": "optional",
            "comment_behaviors": "optional",
        },
        "traits": [
            {"id": "age_band", "text": "Age", "kind": "choice", "options": ["18-30", "31+"]},
            {"id": "note", "text": "Anything about you", "kind": "text"},
        ],
        "end": {
            "rating_question": "overall",
            "questions": [
                {
                    "id": "overall",
                    "text": "Overall?",
                    "kind": "scale",
                    "min": 1,
                    "max": 5,
                    "required": True,
                },
                {"id": "comments", "text": "Comments", "kind": "text"},
            ],
        },
        "safety": {
            "notice": "If you are in danger, call for help.",
            "resources": [{"name": "Helpline", "contact": "555-0100"}],
            "keywords": ["hopeless", "hurt myself"],
        },
    }
    data.update(overrides)
    return data


def invite(url: str, count: int = 1) -> list[str]:
    database = Database(make_engine(url))
    try:
        with database.write() as session:
            return create_invitations(session, count)
    finally:
        database.dispose()


def hidden(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no hidden field {name!r} in page"
    return found.group(1)


@dataclass
class Walker:
    """Drives one participant through the pages, keeping every response it saw."""

    client: TestClient
    token: str
    seen: list[httpx.Response] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"/p/{self.token}"

    def page(self) -> str:
        response = self.client.get(self.base)
        self.seen.append(response)
        assert response.status_code == 200, response.text
        return response.text

    def step(self) -> str:
        found = re.search(r'<main data-step="([^"]+)"', self.page())
        assert found, "participant page without its step"
        return found.group(1)

    def post(self, action: str, data: dict[str, Any], expect: int = 200) -> httpx.Response:
        html = self.page()
        form = {"csrf": hidden(html, "csrf"), "step": hidden(html, "step"), **data}
        response = self.client.post(f"{self.base}/{action}", data=form)
        self.seen.append(response)
        assert response.status_code == expect, response.text
        return response

    def consent(self) -> None:
        self.post("consent", {"agree": "yes"})

    def traits(self, **answers: str) -> None:
        self.post("traits", {f"q_{k}": v for k, v in answers.items()})

    def message(self, text_: str, expect: int = 200, **extra: Any) -> httpx.Response:
        state = {
            "emotions": ["sadness", "anxiety"],
            "primary": "sadness",
            "intensity": "4",
            "valence": "-40",
            "arousal": "70",
            "need": "To be heard.",
            "need_behaviors": ["reflection"],
        }
        panas = {f"panas_{item}": "2" for item in PANAS}
        return self.post("message", {"message": text_, **state, **panas, **extra}, expect)

    def judge(self, choice: str = "A", expect: int = 200, **extra: Any) -> httpx.Response:
        data = {
            "behaviors_A": ["question", "validation"],
            "behaviors_B": ["suggestion"],
            "choice": choice,
            "strength": "2",
            "comment": "Just listen to me.",
            "comment_behaviors": ["reflection"],
            **extra,
        }
        return self.post("judge", data, expect)

    def end(self) -> None:
        self.post("end", {})

    def survey(self, **extra: Any) -> None:
        state = {"emotions": ["relief"], "intensity": "2", "valence": "30", "arousal": "20"}
        panas = {f"panas_{item}": "3" for item in PANAS}
        self.post("survey", {**state, **panas, "q_overall": "4", "q_comments": "Fine.", **extra})


def admin_login(client: TestClient, password: str = ADMIN_PASSWORD) -> httpx.Response:
    page = client.get("/admin/login")
    return client.post(
        "/admin/login", data={"csrf": hidden(page.text, "csrf"), "password": password}
    )
