"""Participant sessions in Debian's chromium (Playwright), then what the database holds.

The app runs under uvicorn on 127.0.0.1 with the mock pool. One session uses the mouse on a
desktop-wide page with every question asked; one leaves the sliders alone and forgets a
required answer; one takes a whole study at a phone's width (390 px) with the keyboard only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from collect_harness import PANAS, Serve, invite, study_data

from attunebench.collect.crud import all_participants
from attunebench.collect.db import Database, make_engine
from attunebench.collect.export import conversation
from attunebench.collect.study import Study, parse_study
from attunebench.data.schema import Conversation

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser


def _stored(url: str, study: Study) -> list[Conversation]:
    database = Database(make_engine(url))
    try:
        with database.read() as session:
            return [conversation(p, study) for p in all_participants(session) if p.turns]
    finally:
        database.dispose()


def test_a_whole_session_with_the_mouse(serve: Serve, chromium: Browser) -> None:
    study = parse_study(study_data())
    base, url = serve(study)
    (token,) = invite(url)
    refused: list[str] = []

    def state(page: Page, emotions: list[str], values: dict[str, str], panas: str) -> None:
        offered = "els => els.map(e => e.value).filter(Boolean)"
        assert page.eval_on_selector_all("#primary option:not([disabled])", offered) == []
        for emotion in emotions:
            page.check(f"input[name=emotions][value={emotion}]")
        # "which is strongest?" offers the ticked emotions only (collect.js)
        shown = page.eval_on_selector_all("#primary option:not([disabled])", offered)
        assert sorted(shown) == sorted(emotions)
        page.select_option("#primary", emotions[0])
        for name, value in values.items():
            page.locator(f"#{name}").fill(value)  # range inputs take fill() in Playwright
            assert page.locator(f"output[data-for={name}]").inner_text() == value  # collect.js
            assert not page.locator(f"input[name={name}_unset]").is_checked()
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
    turns = [
        ("My flatmate keeps ignoring me.", ["loneliness", "sadness"], "B"),
        ("I don't know what to say to her.", ["confusion"], "tie"),
    ]
    for n, (message, emotions, choice) in enumerate(turns):
        page.fill("#message", message)
        values = {"intensity": str(4 - n), "valence": "-40", "arousal": "65"}
        state(page, emotions, values, panas=str(n + 2))
        page.fill("#need", f"Need number {n}")
        page.click("summary:has-text('What would you like a reply to do?')")
        page.check("input[name=need_behaviors][value=reflection]")
        page.click("button:has-text('Send')")
        page.wait_for_selector("text=Reply B")
        for position, labels in (("A", ["question"]), ("B", ["suggestion", "validation"])):
            page.click(f"summary:has-text('What did Reply {position} do?')")
            for label in labels:
                page.check(f"input[name=behaviors_{position}][value={label}]")
        page.check(f"input[name=choice][value={choice}]")
        assert page.locator("#q-strength").is_visible() is (choice != "tie")
        if choice != "tie":
            page.check("input[name=strength][value='3']")
        page.fill("#comment", f"Comment number {n}")
        page.click("button:has-text('Continue')")
        page.wait_for_selector("#message")
    page.click("text=End the conversation")
    page.wait_for_selector("text=Last questions")
    state(page, ["relief"], {"intensity": "2", "valence": "35", "arousal": "20"}, panas="4")
    page.check("input[name=q_overall][value='5']")
    page.fill("#q_comments", "Thanks.")
    page.click("button:has-text('Finish')")
    page.wait_for_selector("text=Your deletion code")
    assert refused == []  # the content-security policy blocked nothing the app serves

    (record,) = _stored(url, study)
    assert record.participant is not None
    assert record.participant.traits == {"age_band": "31+", "note": "I work nights."}
    assert [t.user for t in record.turns] == [t[0] for t in turns]
    for n, (turn, (_, emotions, choice)) in enumerate(zip(record.turns, turns, strict=True)):
        assert turn.state is not None and turn.preference is not None and turn.need is not None
        assert set(turn.state.emotions) == set(emotions) and turn.state.primary == emotions[0]
        assert (turn.state.intensity, turn.state.valence, turn.state.arousal) == (4 - n, -0.4, 0.65)
        assert turn.state.panas == dict.fromkeys(PANAS, n + 2)
        assert (turn.need.text, turn.need.behaviors) == (f"Need number {n}", ("reflection",))
        responses = {r.id[-1]: r for r in turn.responses}
        assert responses["a"].behaviors == ("question",)
        assert responses["b"].behaviors == ("suggestion", "validation")
        assert turn.preference.tie is (choice == "tie")
        assert turn.preference.chosen == (None if choice == "tie" else responses["b"].id)
        assert turn.preference.strength == (None if choice == "tie" else 3)
        assert turn.preference.comment == f"Comment number {n}"
        assert turn.continued_by == ("random" if choice == "tie" else "pick")
    assert record.outcome is not None and record.outcome.final_state is not None
    assert record.outcome.final_state.emotions == ("relief",)
    assert record.outcome.rating == 5
    assert record.outcome.survey == {"overall": 5, "comments": "Thanks."}


def test_untouched_sliders_and_a_missing_required_answer(serve: Serve, chromium: Browser) -> None:
    questions = {"valence": "optional", "arousal": "required"}
    study = parse_study(study_data(questions=questions, traits=[]))
    base, url = serve(study)
    (token,) = invite(url)
    page = chromium.new_page()
    page.goto(f"{base}/p/{token}")
    page.click("text=I agree and want to take part")
    assert page.locator("output[data-for=intensity]").inner_text() == "not answered"
    page.fill("#message", "Nothing much happened today.")
    page.check("input[name=emotions][value=neutral]")
    page.fill("#need", "Nothing really.")
    page.click("button:has-text('Send')")  # arousal is required and untouched
    page.wait_for_selector("#problems")
    problems = page.locator("#problems")
    assert "Please move the slider to say how calm or activated you feel" in problems.inner_text()
    assert page.evaluate("document.activeElement.id") == "problems"  # read first
    assert page.locator("#err-arousal").is_visible()
    assert page.locator("#message").input_value() == "Nothing much happened today."
    assert page.locator("input[name=emotions][value=neutral]").is_checked()
    assert page.locator("#need").input_value() == "Nothing really."
    assert page.locator("input[name=intensity_unset]").is_checked()  # still unanswered
    page.locator("#arousal").fill("30")
    page.click("button:has-text('Send')")
    page.wait_for_selector("text=Reply B")
    (record,) = _stored(url, study)
    state = record.turns[0].state
    assert state is not None and state.arousal == 0.3
    assert (state.intensity, state.valence) == (None, None)  # untouched: no value at all


def _tab_to(page: Page, selector: str, limit: int = 150) -> None:
    """Press Tab until the focused element matches `selector` (the keyboard's only way)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement?.matches(s) ?? false", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def _pick_radio(page: Page, name: str, value: str) -> None:
    _tab_to(page, f"input[name='{name}']")
    page.keyboard.press("Space")
    for _ in range(12):
        if page.evaluate("() => document.activeElement.value") == value:
            return
        page.keyboard.press("ArrowRight")
    raise AssertionError(f"no {value!r} among the {name} radios")


def _press(page: Page, selector: str) -> None:
    """Tab to a button and press Enter; returns once the next page has loaded."""
    _tab_to(page, selector)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def _fits(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{page.url} is {width} px wide at a 390 px viewport"


def test_a_whole_study_at_390_px_with_the_keyboard_only(serve: Serve, chromium: Browser) -> None:
    study = parse_study(study_data(questions={"behaviors": "optional"}, turns={"min": 1, "max": 2}))
    base, url = serve(study)
    (token,) = invite(url)
    page: Any = chromium.new_page(viewport={"width": 390, "height": 844}, has_touch=True)
    page.goto(f"{base}/p/{token}")
    _fits(page)
    _press(page, "button[value=yes]")
    _fits(page)
    _tab_to(page, "#q_age_band")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.locator("#q_age_band").input_value() == "31+"
    _press(page, "form[action$='/traits'] button")
    page.wait_for_selector("#message")
    _fits(page)
    _tab_to(page, "#message")
    page.keyboard.type("I can't sleep before exams.")
    _tab_to(page, "input[name=emotions][value=anxiety]")
    page.keyboard.press("Space")
    _tab_to(page, "#intensity")
    page.keyboard.press("ArrowRight")  # 3 -> 4, and the slider now has an answer
    assert page.locator("output[data-for=intensity]").inner_text() == "4"
    _tab_to(page, "#need")
    page.keyboard.type("Calm words.")
    _press(page, "form[action$='/message'] button")
    page.wait_for_selector("text=Reply B")
    _fits(page)
    _tab_to(page, "summary")
    page.keyboard.press("Enter")  # unfold "What did Reply A do?"
    _tab_to(page, "input[name=behaviors_A][value=question]")
    page.keyboard.press("Space")
    _pick_radio(page, "choice", "B")
    _pick_radio(page, "strength", "2")
    _press(page, "form[action$='/judge'] button")
    page.wait_for_selector("#message")
    _press(page, "form[action$='/end'] button")
    page.wait_for_selector("text=Last questions")
    _fits(page)
    _tab_to(page, "input[name=emotions][value=relief]")
    page.keyboard.press("Space")
    _pick_radio(page, "q_overall", "4")
    _press(page, "form[action$='/survey'] button")
    page.wait_for_selector("text=Your deletion code")
    _fits(page)

    (record,) = _stored(url, study)
    (turn,) = record.turns
    assert turn.user == "I can't sleep before exams."
    assert turn.state is not None and turn.state.emotions == ("anxiety",)
    assert turn.state.intensity == 4 and turn.need is not None and turn.need.text == "Calm words."
    assert turn.preference is not None and turn.preference.strength == 2
    assert turn.preference.chosen is not None and turn.preference.chosen.endswith("-b")
    assert {r.id[-1]: r.behaviors for r in turn.responses}["a"] == ("question",)
    assert record.outcome is not None and record.outcome.rating == 4
    assert record.participant is not None and record.participant.traits["age_band"] == "31+"


def test_a_question_asked_again_is_answered_in_the_page(serve: Serve, chromium: Browser) -> None:
    """Every turn gets a probe (`[retest] share = 1`): turn 0's comes after turn 1's pick, turn
    1's once the conversation is over; each is answered as the page shows it."""
    study = parse_study(
        study_data(questions={}, traits=[], turns={"min": 2, "max": 2}, retest={"share": 1.0})
    )
    base, url = serve(study)
    (token,) = invite(url)
    page = chromium.new_page()
    page.goto(f"{base}/p/{token}")
    page.click("text=I agree and want to take part")
    first: dict[int, dict[str, str]] = {}
    for n, (message, emotion) in enumerate(
        (("I lost my keys.", "anger"), ("Still no keys.", "sadness"))
    ):
        page.fill("#message", message)
        page.check(f"input[name=emotions][value={emotion}]")
        page.click("button:has-text('Send')")
        page.wait_for_selector("text=Reply B")
        first[n] = {
            "A": page.locator("section[aria-label='Reply A'] p.prose").inner_text(),
            "B": page.locator("section[aria-label='Reply B'] p.prose").inner_text(),
        }
        page.check("input[name=choice][value=A]")
        page.click("button:has-text('Continue')")
    answered = {}
    for turn, message in ((0, "I lost my keys."), (1, "Still no keys.")):
        page.wait_for_selector(f"h1:has-text('Turn {turn + 1}')")
        assert message in page.locator("main").inner_text()
        if page.locator("input[name=choice]").count():
            shown = page.locator("section[aria-label='Reply A'] p.prose").inner_text()
            assert shown == first[turn]["B"]  # the replies in each other's places
            page.check("input[name=choice][value=B]")  # the reply picked first
            answered[turn] = "pick"
        else:
            assert not page.locator("input[name=emotions]:checked").count()  # answer hidden
            page.check("input[name=emotions][value=fear]")
            answered[turn] = "state"
        page.click("button:has-text('Continue')")
    page.wait_for_selector("text=Last questions")
    (record,) = _stored(url, study)
    assert [p.turn for p in record.probes] == [0, 1]
    for probe in record.probes:
        turn = record.turns[probe.turn]
        if answered[probe.turn] == "pick":
            assert probe.preference is not None and turn.preference is not None
            assert probe.preference.chosen == turn.preference.chosen  # the same reply
        else:
            assert probe.state is not None and probe.state.emotions == ("fear",)
            assert turn.state is not None and turn.state.emotions != ("fear",)
