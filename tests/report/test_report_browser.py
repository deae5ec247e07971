"""report.html in Debian's chromium (Playwright, headless, served on 127.0.0.1): it loads with
no console error, requests nothing but itself, and shows every section; for 7 models x 5 tasks
the summary is on screen at 1400 x 900 and the folded page is short. The screenshot of the
report's top is kept: under pytest's tmp path, and copied to `artefacts/` (ignored by git)."""

from __future__ import annotations

import contextlib
import functools
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from attunebench.analysis import Options, Summary, build_summary
from attunebench.report import SECTIONS, write_report
from planted import synthetic
from planted.synthetic import Plan

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

ARTEFACTS = Path(__file__).resolve().parents[2] / "artefacts"
SUPPORTED = ("emotion", "behavior", "preference", "response", "rating")
# The page for 7 models x 5 tasks was 44,354 px long before the summary and the folding.
LONGEST_PAGE_PX = 44_354 // 3


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return None


def seven_by_five() -> Summary:
    """Four models under test above three baselines on five tasks, in both context modes."""
    # the baselines first: the planted accuracies rise with the position in this list
    names = [f"baseline/{b}" for b in ("random", "majority", "knn")]
    names += [f"m/model{i}" for i in range(4)]
    accuracy = {
        name: {task: 0.3 + 0.08 * i + 0.02 * j for j, task in enumerate(SUPPORTED)}
        for i, name in enumerate(names)
    }
    plan = Plan(
        accuracy,
        conversations=40,
        variants=("blind", "informed"),
        informed_gain=0.3,
        judge_accuracy=0.7,
        conversation_spread=0.5,
        kinds={name: "baseline" for name in names if name.startswith("baseline/")},
    )
    return build_summary(synthetic.runs(plan), Options(resamples=300, permutations=99))


@contextlib.contextmanager
def serving(summary: Summary, folder: Path) -> Iterator[str]:
    write_report(summary, folder)
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def served(summary: Summary, tmp_path: Path) -> Iterator[str]:
    with serving(summary, tmp_path) as url:
        yield url


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


def test_the_summary_is_on_screen_and_the_folded_page_is_short(
    chromium: Browser, tmp_path: Path
) -> None:
    summary = seven_by_five()
    with serving(summary, tmp_path / "report") as url:
        page = chromium.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/report.html", wait_until="networkidle")
        glance = page.locator("#glance")
        box = glance.bounding_box()
        assert box is not None and glance.is_visible()
        assert page.evaluate("window.scrollY") == 0 and box["y"] + box["height"] <= 900
        text = glance.inner_text()
        for lead in summary.leads:  # each task's leader, with its margin's interval
            assert lead.leader is not None and lead.ci_low is not None
            assert f"{lead.leader} {lead.leader_value:.3f}, {lead.value:+.3f}" in text
        assert "per conversation" in text and "per item" in text
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height <= LONGEST_PAGE_PX, height
        # folded sections open with a click
        worst = page.locator("#worst-items pre").first
        assert not worst.is_visible()
        page.locator("#worst-items > details > summary").click()
        assert worst.is_visible()
        page.evaluate("window.scrollTo(0, 0)")
        shot = tmp_path / "report-top.png"
        page.screenshot(path=str(shot))
    ARTEFACTS.mkdir(exist_ok=True)
    shutil.copyfile(shot, ARTEFACTS / "report-top.png")
    assert shot.stat().st_size > 10_000
