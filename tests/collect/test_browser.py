"""A whole participant session in Debian's chromium (Playwright), then its export.

The app runs under uvicorn on 127.0.0.1 with the mock pool; the browser types, ticks, slides
and clicks like a participant, and the exported record must validate and hold every answer.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import uvicorn
from collect_harness import ADMIN_PASSWORD, PANAS, invite, study_data

from attunebench.collect.app import create_app
from attunebench.collect.bootstrap import init_database
from attunebench.collect.crud import all_participants
from attunebench.collect.db import Database, make_engine
from attunebench.collect.export import export_file
from attunebench.collect.settings import Settings
from attunebench.collect.study import parse_study
from attunebench.data.jsonl import read_conversations

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The app on a free local port; yields (base URL, database URL)."""
    url = f"sqlite:///{tmp_path / 'browser.db'}"
    init_database(url, parse_study(study_data()), "# toml", ADMIN_PASSWORD)
    port = _free_port()
    config = uvicorn.Config(create_app(Settings(database_url=url)), host="127.0.0.1", port=port,
                            log_level="warning", lifespan="on")  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_a_whole_session_in_chromium(served: tuple[str, str], chromium: Browser) -> None:
    base, url = served
    (token,) = invite(url)
    refused: list[str] = []

    def state(page: Page, emotions: list[str], values: dict[str, str], panas: str) -> None:
        for emotion in emotions:
            page.check(f"input[name=emotions][value={emotion}]")
        page.select_option("#primary", emotions[0])
        for name, value in values.items():
            page.locator(f"#{name}").fill(value)  # range inputs take fill() in Playwright
            assert page.locator(f"output[data-for={name}]").inner_text() == value  # collect.js ran
        for item in PANAS:
            page.check(f"input[name=panas_{item}][value='{panas}']")

    page = chromium.new_page()
    page.on("console", lambda m: refused.append(m.text) if "Refused" in m.text else None)
    page.goto(f"{base}/p/{token}")
    assert "If you are in danger" in page.content()
    page.click("text=I agree and want to take part")
    page.select_option("#q_age_band", "31+")
    page.fill("#q_note", "I work nights.")
    page.click("button:has-text('Continue')")
    turns = [("My flatmate keeps ignoring me.", ["loneliness", "sadness"], "B"),
             ("I don't know what to say to her.", ["confusion"], "tie")]
    for n, (message, emotions, choice) in enumerate(turns):
        page.fill("#message", message)
        state(page, emotions, {"intensity": str(4 - n), "valence": "-40", "arousal": "65"},
              panas=str(n + 2))
        page.click("button:has-text('Send')")
        page.wait_for_selector("text=Reply B")
        page.check("input[name=behaviors_A][value=question]")
        page.check("input[name=behaviors_B][value=suggestion]")
        page.check("input[name=behaviors_B][value=validation]")
        page.check(f"input[name=choice][value={choice}]")
        if choice != "tie":
            page.check("input[name=strength][value='3']")
        page.fill("#wanted", f"Wanted number {n}")
        page.check("input[name=wanted_behaviors][value=reflection]")
        page.click("button:has-text('Continue')")
        page.wait_for_selector("#message")
    page.click("text=End the conversation")
    page.wait_for_selector("text=Last questions")
    state(page, ["relief"], {"intensity": "2", "valence": "35", "arousal": "20"}, panas="4")
    page.check("input[name=q_overall][value='5']")
    page.fill("#q_comments", "Thanks.")
    page.click("button:has-text('Finish')")
    page.wait_for_selector("text=Thank you")
    assert refused == []  # the content-security policy blocked nothing the app serves

    database = Database(make_engine(url))
    try:
        with database.read() as session:
            study = parse_study(study_data())
            count, report = export_file(Path(url.removeprefix("sqlite:///")).with_suffix(".jsonl"),
                                        all_participants(session), study)  # fmt: skip
    finally:
        database.dispose()
    assert count == 1 and report is not None and report.ok, report
    (conversation,) = read_conversations(Path(url.removeprefix("sqlite:///")).with_suffix(".jsonl"))
    assert conversation.participant is not None
    assert conversation.participant.traits == {"age_band": "31+", "note": "I work nights."}
    assert [t.user for t in conversation.turns] == [t[0] for t in turns]
    for n, (turn, (_, emotions, choice)) in enumerate(zip(conversation.turns, turns, strict=True)):
        assert turn.state is not None and turn.preference is not None
        assert set(turn.state.emotions) == set(emotions) and turn.state.primary == emotions[0]
        assert (turn.state.intensity, turn.state.valence, turn.state.arousal) == (4 - n, -0.4, 0.65)
        assert turn.state.panas == dict.fromkeys(PANAS, n + 2)
        responses = {r.id[-1]: r for r in turn.responses}
        assert responses["a"].behaviors == ("question",)
        assert responses["b"].behaviors == ("suggestion", "validation")
        assert turn.preference.tie is (choice == "tie")
        assert turn.preference.chosen == (None if choice == "tie" else responses["b"].id)
        assert turn.preference.strength == (None if choice == "tie" else 3)
        assert turn.preference.wanted == f"Wanted number {n}"
        assert turn.preference.wanted_behaviors == ("reflection",)
    assert conversation.outcome is not None and conversation.outcome.final_state is not None
    assert conversation.outcome.final_state.emotions == ("relief",)
    assert conversation.outcome.rating == 5
    assert conversation.outcome.survey == {"overall": 5, "comments": "Thanks."}
