"""Shared fixtures: where the third-party corpora live (and whether their absence is fatal), a
fresh collection database per test (SQLite, and PostgreSQL when ATTUNEBENCH_TEST_POSTGRES_URL is
set), and Debian's chromium under Playwright for the browser tests.

The toy task of `tests/tasks/toy` (a module and its prompt file, nothing else) is registered
beside the package's own tasks for the whole run: every test that reads the tasks from the
registry meets it, so a test that lists the tasks by hand fails (`tests/tasks/test_new_task.py`
says what a new task takes).

A suite started in the background (`make test &`, `nohup`) inherits Ctrl-C (SIGINT) ignored, and
so would every run it starts: the tests that send it expect it delivered, as a terminal does."""

from __future__ import annotations

import importlib
import os
import secrets
import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from attunebench.tasks import load_tasks

if TYPE_CHECKING:
    from playwright.sync_api import Browser

REPO = Path(__file__).resolve().parents[1]

# An ignored signal stays ignored across exec, a handled one does not: handling it here gives
# the runs the tests start Ctrl-C back too.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """Register the toy task after the package's own (see the module docstring); a child
    process gets it from `registered.cli_command`."""
    from registered import TASKS_DIR, TOY

    sys.path.insert(0, str(TASKS_DIR))
    load_tasks()
    importlib.import_module(TOY)


POSTGRES_ENV = "ATTUNEBENCH_TEST_POSTGRES_URL"
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


def _postgres_schema() -> Iterator[str]:
    """A URL whose tables live in a fresh schema, dropped afterwards; skips when unset."""
    base = os.environ.get(POSTGRES_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    # Imported here: the analysis and task tests run without the collection app's packages.
    from sqlalchemy import create_engine, text

    schema = "t_" + secrets.token_hex(6)
    admin = create_engine(base)
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{base}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as connection:
            connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty collection database: SQLite in tmp_path, then a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'collect.db'}"
    else:
        yield from _postgres_schema()


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
