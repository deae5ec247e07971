"""A database out of reach is a retry page (503 with Retry-After), never a 500; and the restart
drill, short: `benchmarks/collect_restart.py` restarts the PostgreSQL server under a study
served by 2 app processes; participants get 503s, never a 500, the app recovers by itself and
no acknowledged answer is lost."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from collect_harness import invite
from sqlalchemy.exc import InterfaceError, OperationalError

from attunebench.collect import crud
from attunebench.collect.db import normalise_url

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("SELECT", {}, Exception("server closed the connection unexpectedly")),
        InterfaceError("SELECT", {}, Exception("connection already closed")),
    ],
)
def test_a_database_out_of_reach_is_a_retry_page(
    make_client: Any, database_url: str, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    client = make_client()
    (token,) = invite(database_url)
    assert client.get(f"/p/{token}").status_code == 200

    def unreachable(*_args: object, **_kwargs: object) -> None:
        raise error

    monkeypatch.setattr(crud, "participant_by_token", unreachable)
    page = client.get(f"/p/{token}")
    assert page.status_code == 503 and page.headers["retry-after"] == "5"
    assert "briefly unavailable" in page.text and "Traceback" not in page.text
    monkeypatch.undo()
    assert client.get(f"/p/{token}").status_code == 200  # the same app, back by itself


@pytest.mark.postgres
@pytest.mark.slow
def test_a_postgres_restart_mid_study_loses_nothing_and_serves_no_500() -> None:
    url = os.environ.get("ATTUNEBENCH_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("ATTUNEBENCH_TEST_POSTGRES_URL is not set")
    if shutil.which("pg_ctlcluster") is None or os.geteuid() != 0:
        pytest.skip("restarting the server needs Debian's pg_ctlcluster, run as root")
    short = ["--participants", "12", "--spread-s", "1.5", "--restart-after-s", "1.0"]
    script = REPO / "benchmarks" / "collect_restart.py"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, str(script), "--postgres-url", normalise_url(url), *short],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["lost_answers"] == 0
    assert figures["responses_5xx_other_than_503"] == 0
    assert figures["connection_errors"] == 0 and figures["app_processes_replaced"] == 0
    assert figures["acknowledged_answers"] >= 12 * 10  # most of the 12 x 15 pages, 503s or not
    assert figures["responses_503"] > 0  # the restart did reach the participants
    assert 0 < figures["recovered_s"] < figures["restart_s"] + 10
