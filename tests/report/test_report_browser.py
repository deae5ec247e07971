"""report.html in Debian's chromium (Playwright, headless, served on 127.0.0.1): it loads with
no console error, requests nothing but itself, and shows every section."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from attunebench.analysis import Summary
from attunebench.report import SECTIONS, write_report

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def served(summary: Summary, tmp_path: Path) -> Iterator[str]:
    write_report(summary, tmp_path)
    handler = functools.partial(QuietHandler, directory=str(tmp_path))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_report_opens_offline_with_every_section(served: str, chromium: Browser) -> None:
    page_url = f"{served}/report.html"
    requests: list[str] = []
    problems: list[str] = []
    page = chromium.new_page(viewport={"width": 1300, "height": 900})
    page.on("request", lambda request: requests.append(request.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    response = page.goto(page_url, wait_until="networkidle")
    assert response is not None and response.ok
    for section_id, title in SECTIONS:
        section = page.locator(f"section#{section_id}")
        assert section.count() == 1, section_id
        assert section.locator("h2").inner_text() == title
    assert page.locator("svg").count() >= 5  # charts drawn inline
    assert page.locator("#worst-items pre").count() > 0
    # wide tables scroll inside their own box: the page itself never scrolls sideways
    overflow = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    assert page.evaluate(overflow) <= 0
    assert problems == []
    assert requests == [page_url]
