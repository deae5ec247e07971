"""Streamed replies in Debian's chromium (Playwright), against mock models that write slowly (a
word every 0.4 s): the text shows while it is being written, within a second of the first word,
the pick opens only once both replies are whole, and what is stored is what was shown. Without
JavaScript the same study gives whole replies, as before."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest
from collect_harness import Serve, invite, study_data

from attunebench.collect import crud
from attunebench.collect.db import Database, make_engine
from attunebench.collect.study import Study, parse_study

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

LATENCY_S, WORD_S = 0.5, 0.4
WORDS = "Thank you for telling me this; it sounds like a heavy week for you."


def _slow_study() -> Study:
    models = [
        {
            "spec": spec,
            "options": {
                "outputs": [f"{WORDS} ({spec})"],
                "latency_s": LATENCY_S,
                "token_delay_s": WORD_S,
            },
        }
        for spec in ("mock/slow-one", "mock/slow-two")
    ]
    return parse_study(
        study_data(models=models, questions={}, traits=[], turns={"min": 1, "max": 1})
    )


def _stored(url: str) -> dict[str, str]:
    database = Database(make_engine(url))
    with database.read() as session:
        (participant,) = crud.all_participants(session)
        replies = {r.position: r.text for r in participant.turns[0].replies}
    database.dispose()
    return replies


def _send(page: Page, base: str, token: str) -> None:
    page.goto(f"{base}/p/{token}")
    page.click("text=I agree and want to take part")
    page.fill("#message", "Work has been a lot lately.")
    page.check("input[name=emotions][value=anxiety]")
    page.click("button:has-text('Send')")


def test_replies_show_as_they_are_written(serve: Serve, chromium: Browser) -> None:
    base, url = serve(_slow_study())
    (token,) = invite(url)
    page = chromium.new_page()
    _send(page, base, token)
    page.wait_for_selector(".streamed:not([hidden])")
    opened = time.monotonic()
    reply_a = "section[aria-label='Reply A'] p.prose"
    page.wait_for_selector(f"{reply_a}:not(:empty)")
    first = time.monotonic()
    # The first word comes LATENCY_S after the stream opens; it shows within a second of that.
    assert first - opened < LATENCY_S + 1.0, first - opened
    assert page.locator("button:has-text('Continue')").is_disabled()  # not whole yet
    assert page.locator("input[name=choice][value=A]").is_disabled()
    shown_early = page.locator(reply_a).inner_text()
    page.wait_for_selector("form[data-complete]")
    whole = time.monotonic()
    assert whole - first > 5 * WORD_S  # the text was there long before the reply was whole
    shown = {p: page.locator(f"section[aria-label='Reply {p}'] p.prose").inner_text() for p in "AB"}
    assert WORDS.startswith(shown_early.strip()) and len(shown_early) < len(shown["A"])
    assert shown == _stored(url)
    page.check("input[name=choice][value=B]")
    page.click("button:has-text('Continue')")
    page.wait_for_selector("text=Last questions")


def test_without_javascript_the_replies_come_whole(serve: Serve, chromium: Browser) -> None:
    base, url = serve(_slow_study())
    (token,) = invite(url)
    page = chromium.new_page(java_script_enabled=False)
    _send(page, base, token)
    page.wait_for_selector("text=Reply B")
    assert page.locator(".streamed").is_hidden()
    shown = {
        p: page.locator(f".replies section[aria-label='Reply {p}'] p.prose").first.inner_text()
        for p in "AB"
    }
    assert shown == _stored(url) and all(WORDS in text for text in shown.values())
