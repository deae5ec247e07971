"""Crash and resume: `attunebench run` killed with SIGKILL five times, at seeded points, against a
server failing 30% of calls, and resumed with the same command each time, ends with the records
of an uninterrupted run, and the server saw no successful call made twice."""

from __future__ import annotations

import json
from pathlib import Path

from attunebench.data.sample import sample_path
from attunebench.engine import RECORDS_FILE, read_records, read_run_info
from testkit.drills import crash_drill
from testkit.servers.fault_server import FaultPlan

# The client's timeout (2 s) is far above a loaded machine's slowest real answer, so a call is
# only repeated when a kill or an injected timeout (held 2.5 s) says so, never by a slow answer
# the client gave up on, which the server would count as a second successful call.
PLAN = FaultPlan(fail_rate=0.3, seed=2, retry_after_s=0.01, timeout_s=2.5)


def test_five_kills_lose_nothing_and_repeat_no_successful_call(tmp_path: Path) -> None:
    report = crash_drill(sample_path(), tmp_path, PLAN, kills=5, seed=7, timeout_s=2.0)
    assert report.kills == 5 and report.sessions == 6  # every kill landed mid-run
    assert report.unsettled_kills == 0, "the cache lagged behind the answers delivered"
    assert report.records_identical, report.differences[:10]
    assert report.items_lost == 0 and report.repeated_successful_calls == 0
    assert report.faults_injected > 0
    killed = tmp_path / "killed" / "run"
    info = read_run_info(killed)
    assert info is not None and info.complete and info.planned_items == report.planned
    keys = [r.key for r in read_records(killed / RECORDS_FILE)]
    assert len(keys) == len(set(keys)) == report.planned  # one line per item, none twice
    json.loads((killed / "ledger.json").read_text(encoding="utf-8"))
