"""Screenshots of the collection app for docs/collecting.md, taken in Debian's chromium.

Serves `examples/study.toml` (mock pool, offline) on a free local port, walks one participant
through it at a phone's width (390 px) and once at a desktop's, and logs in as the researcher
(on a desktop, and on a phone for the participants' table).
Writes the PNGs beside this file.

    .venv/bin/python docs/collect/screenshots.py
"""

from __future__ import annotations

import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from playwright.sync_api import Page, sync_playwright

from attunebench.collect.app import create_app
from attunebench.collect.bootstrap import init_database
from attunebench.collect.crud import create_invitations
from attunebench.collect.db import Database, make_engine
from attunebench.collect.settings import Settings
from attunebench.collect.study import load_study

HERE = Path(__file__).resolve().parent
STUDY = HERE.parents[1] / "examples" / "study.toml"
PASSWORD = "a password for the screenshots"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def serve(url: str) -> tuple[str, uvicorn.Server]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    app = create_app(Settings(database_url=url, cookie_secure=False))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def shoot(page: Page, name: str) -> None:
    page.screenshot(path=HERE / f"{name}.png", full_page=True)


def message(page: Page, text: str, emotions: list[str], intensity: str) -> None:
    page.fill("#message", text)
    for emotion in emotions:
        page.check(f"input[name=emotions][value={emotion}]")
    page.locator("#intensity").fill(intensity)
    page.fill("#need", "To feel less alone with it.")


def participant(page: Page, link: str, shots: bool) -> None:
    page.goto(link)
    if shots:
        shoot(page, "consent-phone")
    page.click("text=I agree and want to take part")
    page.select_option("#q_age_band", "25-34")
    page.click("button:has-text('Continue')")
    message(
        page,
        "My sister didn't call on my birthday and I keep thinking about it.",
        ["sadness", "loneliness"],
        "4",
    )
    if shots:
        shoot(page, "message-phone")
    page.click("button:has-text('Send')")
    page.wait_for_selector("form[data-complete]")  # both replies written (streamed)
    page.click("summary:has-text('What did Reply A do?')")
    page.check("input[name=behaviors_A][value=question]")
    if shots:
        shoot(page, "replies-phone")
    page.check("input[name=choice][value=A]")
    page.click("button:has-text('Continue')")
    second = "We used to be close. Now it feels like I'm the only one trying."
    page.fill("#message", second)
    if shots:
        page.click("button:has-text('Send')")  # no emotion ticked: the page asks again
        page.wait_for_selector("#problems")
        shoot(page, "message-problem-phone")
    message(page, second, ["sadness"], "3")
    page.click("button:has-text('Send')")
    page.wait_for_selector("form[data-complete]")
    page.check("input[name=choice][value=tie]")
    page.click("button:has-text('Continue')")
    page.click("text=End the conversation")
    page.check("input[name=emotions][value=hope]")
    page.check("input[name=q_overall][value='4']")
    if shots:
        shoot(page, "survey-phone")
    page.click("button:has-text('Finish')")
    page.wait_for_selector("text=Your deletion code")
    if shots:
        shoot(page, "thanks-phone")


def main() -> None:
    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("Debian's chromium is needed: `make browser` installs it")
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/screenshots.db"
        init_database(url, load_study(STUDY), STUDY.read_text(encoding="utf-8"), PASSWORD)
        database = Database(make_engine(url))
        with database.write() as session:
            links = create_invitations(session, 2)
        database.dispose()
        base, server = serve(url)
        args: dict[str, Any] = {
            "executable_path": executable,
            "headless": True,
            "args": ["--no-sandbox", "--disable-gpu"],
        }
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(**args)
                participant(browser.new_page(viewport=PHONE), f"{base}/p/{links[0]}", True)
                desktop = browser.new_page(viewport=DESKTOP)
                desktop.goto(f"{base}/p/{links[1]}")
                desktop.click("text=I agree and want to take part")
                desktop.click("button:has-text('Continue')")
                message(desktop, "Work has been a lot lately.", ["overwhelm"], "4")
                desktop.click("button:has-text('Send')")
                desktop.wait_for_selector("form[data-complete]")
                shoot(desktop, "replies-desktop")
                desktop.goto(f"{base}/admin/login")
                desktop.fill("#password", PASSWORD)
                desktop.click("button:has-text('Log in')")
                desktop.wait_for_selector("text=Per model")
                shoot(desktop, "admin-dashboard")
                phone = browser.new_page(viewport=PHONE)
                phone.goto(f"{base}/admin/login")
                phone.fill("#password", PASSWORD)
                phone.click("button:has-text('Log in')")
                phone.goto(f"{base}/admin/participants")
                shoot(phone, "admin-participants-phone")
                browser.close()
        finally:
            server.should_exit = True


if __name__ == "__main__":
    main()
