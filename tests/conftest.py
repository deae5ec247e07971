"""Shared fixtures: where the third-party corpora live (and whether their absence is fatal), and
Debian's chromium under Playwright for the browser tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

REPO = Path(__file__).resolve().parents[1]
# No network, no updates, no GPU: the browser tests run offline in a container.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
                 "--disable-gpu"]  # fmt: skip


def shared_data_dir() -> Path:
    return Path(os.environ.get("ATTUNEBENCH_DATA_DIR", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared corpora folder; skips when absent, fails if ATTUNEBENCH_REQUIRE_SHARED_DATA=1."""
    path = shared_data_dir()
    if not path.is_dir():
        message = f"shared corpora not found at {path} (set ATTUNEBENCH_DATA_DIR)"
        if os.environ.get("ATTUNEBENCH_REQUIRE_SHARED_DATA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def chromium() -> Iterator[Browser]:
    """Debian's chromium, headless, under Playwright; skips when absent, fails under CI."""
    executable = shutil.which("chromium")
    if executable is None:
        reason = "Debian chromium is not installed (`make browser` installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True,
                                             args=CHROMIUM_ARGS)  # fmt: skip
        try:
            yield browser
        finally:
            browser.close()
