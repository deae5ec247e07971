"""A recruitment platform's participants in Debian's chromium (Playwright): one comes from a
Prolific-style link, takes the study and is sent to the completion URL; the same account is
refused a second visit; another is screened out and sent to the screened-out URL. The
platform's pages are answered inside the browser (nothing leaves 127.0.0.1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from collect_harness import Serve, study_data

from attunebench.collect import crud
from attunebench.collect.db import Database, make_engine
from attunebench.collect.payments import payment_rows
from attunebench.collect.platform import PlatformKeys
from attunebench.collect.study import parse_study

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

pytestmark = pytest.mark.browser

PROLIFIC = "https://app.prolific.com/submissions/complete"
COMPLETE, SCREENED = f"{PROLIFIC}?cc=C0MPLETE", f"{PROLIFIC}?cc=SCREENED"


def _platform_page(route: Route) -> None:
    route.fulfill(status=200, content_type="text/html", body="<h1>Prolific: submission</h1>")


def _open(chromium: Browser, base: str, join: str, pid: str) -> Page:
    page = chromium.new_page(viewport={"width": 390, "height": 844})
    page.route(f"{PROLIFIC}*", _platform_page)
    page.goto(f"{base}{join}?PROLIFIC_PID={pid}&STUDY_ID=s-1&SESSION_ID=session-{pid}")
    return page


def test_from_a_prolific_link_to_the_completion_redirect(serve: Serve, chromium: Browser) -> None:
    platform = {
        "preset": "prolific",
        "completion_url": COMPLETE,
        "completion_code": "C0MPLETE",
        "screened_out_url": SCREENED,
    }
    screening = {"text": "Are you 18 or older?", "options": ["yes", "no"], "eligible": ["yes"]}
    enrolment = {"open": True, "cap": 5, "platform": platform, "screening": screening}
    study = parse_study(
        study_data(questions={}, traits=[], turns={"min": 1, "max": 1}, enrolment=enrolment)
    )
    base, url = serve(study)
    database = Database(make_engine(url))
    with database.read() as session:
        slug = crud.get_meta(session, crud.JOIN_SLUG)
        secret = crud.get_meta(session, crud.SECRET_KEY)
    join = f"/join/{slug}"

    page = _open(chromium, base, join, "5f3a9c0e1b2d4f6a8c0e1b2d")
    page.check("input[name=screening][value=yes]")
    page.click("button:has-text('Go on')")
    assert "study-team@example.org" in page.content()  # consent names the contact
    page.click("text=I agree and want to take part")
    page.fill("#message", "My exams start tomorrow.")
    page.check("input[name=emotions][value=anxiety]")
    page.click("button:has-text('Send')")
    page.wait_for_selector("text=Reply B")
    page.check("input[name=choice][value=A]")
    page.click("button:has-text('Continue')")
    page.wait_for_selector("text=Last questions")
    page.check("input[name=emotions][value=relief]")
    page.check("input[name=q_overall][value='4']")
    page.click("button:has-text('Finish')")
    page.wait_for_selector("text=Your deletion code")
    assert "C0MPLETE" in page.content() and "study-team@example.org" in page.content()
    page.click("text=Return to Prolific to finish")
    page.wait_for_selector("text=Prolific: submission")
    assert page.url == COMPLETE

    again = _open(chromium, base, join, "5f3a9c0e1b2d4f6a8c0e1b2d")
    assert "You have taken part already" in again.content()

    other = _open(chromium, base, join, "60aa11bb22cc33dd44ee55ff")
    other.check("input[name=screening][value=no]")
    other.click("button:has-text('Go on')")
    other.click("text=Return to Prolific")
    other.wait_for_selector("text=Prolific: submission")
    assert other.url == SCREENED

    assert secret is not None
    with database.read() as session:
        rows = payment_rows(session, study, PlatformKeys(secret))
    database.dispose()
    assert [(r["participant_id"], r["state"]) for r in rows] == [
        ("5f3a9c0e1b2d4f6a8c0e1b2d", "finished"),
        ("60aa11bb22cc33dd44ee55ff", "screened out"),
    ]
