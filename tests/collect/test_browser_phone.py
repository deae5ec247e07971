"""The phone fixes, in Debian's chromium at 390 px: "How much better?" only after a pick of one
reply, the line saying where the conversation ends, the end survey's scale labels beside their
points, admin tables that say they scroll, and the admin's participant page in the
participant's terms (turns from 1, the self-report in words)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from collect_harness import ADMIN_PASSWORD, Serve, invite, study_data

from attunebench.collect.study import parse_study

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


def _box(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return dict(box)


def test_the_phone_fixes(serve: Serve, chromium: Browser) -> None:
    overall = {
        "id": "overall",
        "text": "Overall, how helpful was the conversation?",
        "kind": "scale",
        "min_label": "not at all",
        "max_label": "very",
        "required": True,
    }
    study = parse_study(
        study_data(
            questions={"intensity": "optional"},
            traits=[],
            turns={"min": 1, "max": 1},
            end={"rating_question": "overall", "questions": [overall]},
        )
    )
    base, url = serve(study)
    (token,) = invite(url)
    page: Any = chromium.new_page(viewport=PHONE)
    page.goto(f"{base}/p/{token}")
    page.click("text=I agree and want to take part")
    page.fill("#message", "I keep putting things off.")
    page.check("input[name=emotions][value=anger]")
    page.click("button:has-text('Send')")
    page.wait_for_selector("form[data-complete]")
    strength = page.locator("#q-strength")
    assert strength.is_hidden()  # before any pick
    page.check("input[name=choice][value=A]")
    assert strength.is_visible()
    page.check("input[name=choice][value=tie]")
    assert strength.is_hidden()  # "about the same" has no "how much better"
    page.click("button:has-text('Continue')")

    page.wait_for_selector("text=Last questions")
    ends = _box(page, ".ends-here")
    last_reply = page.locator(".conversation .bubble.reply").last.bounding_box()
    assert last_reply is not None and ends["y"] >= last_reply["y"] + last_reply["height"]
    five, very = _box(page, ".scale-point:last-child"), _box(page, ".scale-ends span:last-child")
    assert "very" in page.locator(".scale-ends span:last-child").inner_text()
    assert abs((very["x"] + very["width"]) - (five["x"] + five["width"])) < 4  # right under it
    assert 0 <= very["y"] - (five["y"] + five["height"]) < 20
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    admin: Any = chromium.new_page(viewport=PHONE)
    admin.goto(f"{base}/admin/login")
    admin.fill("#password", ADMIN_PASSWORD)
    admin.click("button:has-text('Log in')")
    admin.goto(f"{base}/admin/participants")
    table = admin.locator(".table-scroll").first
    assert table.get_attribute("data-overflowing") is not None
    hint = admin.evaluate(
        "() => getComputedStyle(document.querySelector('.table-scroll'), '::before').content"
    )
    assert "Scroll sideways" in hint
    assert admin.evaluate("document.documentElement.scrollWidth") <= 390
    admin.click("table a")
    text = admin.locator("main").inner_text()
    assert "Turn 1" in text and "Turn 0" not in text
    assert "Emotions" in text and "anger" in text and '{"' not in text
