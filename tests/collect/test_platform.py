"""Recruitment-platform links: identifiers carried from the link into enrolment, kept sealed and
hashed, a second arrival of the same account refused, the ways back to the platform (finished,
screened out, declined, left), states and minutes, the payments list, and `collect simulate`
arriving as the platform would send it (planted identifiers, each finisher once)."""

from __future__ import annotations

import csv
import re
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from collect_harness import Serve, Walker, admin_login, hidden, study_data
from fastapi.testclient import TestClient
from sqlalchemy import text
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.collect import crud
from attunebench.collect.db import Database, make_engine
from attunebench.collect.models import PlatformIdentity
from attunebench.collect.progress import progress
from attunebench.collect.simulate import platform_identifiers
from attunebench.collect.study import Study, StudyError, parse_study

COMPLETE = "https://app.prolific.com/submissions/complete?cc=C0MPLETE"
SCREENED = "https://app.prolific.com/submissions/complete?cc=SCREENED"
PROLIFIC = {
    "preset": "prolific",
    "completion_url": COMPLETE,
    "completion_code": "C0MPLETE",
    "screened_out_url": SCREENED,
    "timeout_minutes": 30,
}
SCREENING = {"text": "Are you 18 or older?", "options": ["yes", "no"], "eligible": ["yes"]}


def _study(**enrolment: Any) -> Study:
    settings = {"open": True, "cap": 3, "platform": PROLIFIC, "simulated": True, **enrolment}
    return parse_study(study_data(enrolment=settings))


def _join(client: TestClient) -> str:
    found = re.search(r"https://testserver(/join/[\w-]+)", admin_login(client).text)
    assert found, "the dashboard shows the open link"
    return found.group(1)


def _ids(pid: str) -> dict[str, str]:
    return {"PROLIFIC_PID": pid, "STUDY_ID": "study-1", "SESSION_ID": f"session-{pid}"}


def _enrol(client: TestClient, join: str, pid: str, **answers: str) -> Any:
    page = client.get(f"{join}?{urlencode(_ids(pid))}")
    assert page.status_code == 200, page.text
    roles = ("participant", "study", "session")
    carried = {f"platform_{role}": hidden(page.text, f"platform_{role}") for role in roles}
    return client.post(join, data={**carried, **answers}, follow_redirects=False)


def _database(url: str) -> Database:
    return Database(make_engine(url))


def test_the_platform_block_is_checked() -> None:
    study = _study()
    platform = study.enrolment.platform
    assert platform is not None and platform.shown_name == "Prolific"
    assert platform.params == {
        "participant": "PROLIFIC_PID",
        "study": "STUDY_ID",
        "session": "SESSION_ID",
    }
    with pytest.raises(StudyError, match="needs open = true"):
        parse_study(study_data(enrolment={"platform": PROLIFIC}))
    with pytest.raises(StudyError, match="completion_url or a completion_code"):
        _study(platform={"preset": "prolific", "screened_out_code": "X"})
    with pytest.raises(StudyError, match="participant_param is required"):
        _study(platform={"completion_code": "X", "screened_out_code": "Y"})


def test_identifiers_are_carried_sealed_and_a_second_arrival_refused(
    make_client: Any, database_url: str
) -> None:
    client = make_client(_study())
    join = _join(client)
    bare = client.get(join)
    assert bare.status_code == 400 and "Open the study from Prolific" in bare.text
    assert 'data-platform-params="PROLIFIC_PID STUDY_ID SESSION_ID"' in bare.text
    pid = "5f3a9c0e1b2d4f6a8c0e1b2d"
    page = client.get(f"{join}?{urlencode(_ids(pid))}").text
    assert hidden(page, "platform_participant") == pid
    assert hidden(page, "platform_session") == f"session-{pid}"
    enrolled = _enrol(client, join, pid)
    assert enrolled.status_code == 303 and enrolled.headers["location"].startswith("/p/")

    again = client.get(f"{join}?{urlencode(_ids(pid))}")
    assert again.status_code == 409 and "taken part already" in again.text
    assert "study-team@example.org" in again.text  # where to write if the page was lost
    form = {"platform_participant": pid, "platform_session": "another-session"}
    assert client.post(join, data=form).status_code == 409  # not past the page either
    assert _enrol(client, join, "another-account").status_code == 303

    database = _database(database_url)
    with database.read() as session:
        stored = [
            str(value)
            for table in ("participants", "platform_identities")
            for row in session.execute(text(f"SELECT * FROM {table}")).all()
            for value in row
        ]
        rows = session.query(PlatformIdentity).count()
    database.dispose()
    assert rows == 2
    assert not any(pid in value for value in stored), "the identifier is stored in the clear"


def test_the_ways_back_to_the_platform(make_client: Any, database_url: str) -> None:
    client = make_client(_study(cap=5))
    join = _join(client)
    token = _enrol(client, join, "finisher").headers["location"].removeprefix("/p/")
    walker = Walker(client, token)
    assert "study-team@example.org" in walker.page()  # the consent page names the contact
    early = client.get(f"/p/{token}/complete", follow_redirects=False)
    assert early.headers["location"] == f"/p/{token}"  # not finished: nothing to claim
    walker.consent()
    walker.traits()
    for _ in range(2):
        walker.message("Hi.")
        walker.judge()
    walker.end()
    walker.survey()
    done = walker.page()
    assert "C0MPLETE" in done and f'href="/p/{token}/complete"' in done
    assert "study-team@example.org" in done
    finished = client.get(f"/p/{token}/complete", follow_redirects=False)
    assert finished.status_code == 303 and finished.headers["location"] == COMPLETE

    declined = _enrol(client, join, "decliner").headers["location"].removeprefix("/p/")
    Walker(client, declined).post("consent", {"agree": "no"})
    assert f'href="/p/{declined}/return"' in client.get(f"/p/{declined}").text
    back = client.get(f"/p/{declined}/return", follow_redirects=False)
    assert back.headers["location"] == SCREENED

    leaver = _enrol(client, join, "leaver").headers["location"].removeprefix("/p/")
    Walker(client, leaver).consent()
    support = client.get(f"/p/{leaver}/support").text
    assert "Leave the study" in support
    client.post(f"/p/{leaver}/leave", data={"csrf": hidden(support, "csrf")})
    left = client.get(f"/p/{leaver}").text
    assert 'data-step="left:0"' in left and f'href="/p/{leaver}/return"' in left
    assert client.get(f"/p/{leaver}/return", follow_redirects=False).headers["location"] == SCREENED
    unfinished = client.get(f"/p/{leaver}/complete", follow_redirects=False)
    assert unfinished.headers["location"] == f"/p/{leaver}"


def test_screened_out_at_the_door_is_kept_sent_back_and_not_counted(
    make_client: Any, database_url: str
) -> None:
    study = _study(cap=1, screening=SCREENING)
    client = make_client(study)
    join = _join(client)
    turned = _enrol(client, join, "too-young", screening="no")
    assert turned.status_code == 200 and f'href="{SCREENED}"' in turned.text
    assert client.get(f"{join}?{urlencode(_ids('too-young'))}").status_code == 409
    assert _enrol(client, join, "adult", screening="yes").status_code == 303  # cap 1: not used
    full = _enrol(client, join, "one-too-many", screening="yes")
    assert full.status_code == 409 and "every place is taken" in full.text
    assert f'href="{SCREENED}"' in full.text  # sent back, not left on the page
    database = _database(database_url)
    with database.read() as session:
        now = progress(session, study)
    database.dispose()
    assert now.open_enrolled == 1
    assert sorted(p.state for p in now.participants) == ["screened out", "started"]


def test_states_minutes_and_deletion(make_client: Any, database_url: str) -> None:
    study = _study(cap=5)
    client = make_client(study)
    join = _join(client)
    for pid in ("fresh", "stale"):
        _enrol(client, join, pid)
    database = _database(database_url)
    with database.write() as session:
        stale, fresh = sorted(crud.all_participants(session), key=lambda p: p.id, reverse=True)
        stale.created_at = crud.now() - timedelta(minutes=31)
        stale.consented_at = crud.now() - timedelta(minutes=19)
    with database.read() as session:
        states = {p.id: (p.state, p.minutes) for p in progress(session, study).participants}
    assert states[fresh.public_id][0] == "started"
    assert states[stale.public_id][0] == "timed out"
    assert states[stale.public_id][1] == pytest.approx(12, abs=0.1)  # arrival to consent
    listing = client.get("/admin/participants").text
    assert "timed out" in listing and "12.0" in listing
    csrf = hidden(listing, "csrf")
    client.post(f"/admin/participants/{stale.public_id}/delete", data={"csrf": csrf})
    with database.read() as session:
        kept = session.query(PlatformIdentity).count()
        hashes = session.scalars(text("SELECT platform_hash FROM participants")).all()
    database.dispose()
    assert kept == 1 and len(hashes) == 1  # the deleted participant's identifier went too


def _invoke(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"{args[:2]}: {result.output}"
    return result


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_simulated_platform_arrivals_and_the_payments_list(serve: Serve, tmp_path: Path) -> None:
    study = _study(cap=20)
    base, db = serve(study)
    status = _invoke("collect", "status", "--db", db, "--base-url", base).output
    join = re.search(r"open link: (\S+)", status)
    assert join
    said = _invoke(
        "collect", "simulate", "--url", join.group(1), "--participants", "6", "--seed", "4"
    ).output
    assert "6 finished" in said and "6 second arrivals refused" in said

    payments, data = tmp_path / "payments.csv", tmp_path / "data.jsonl"
    result = _invoke(
        "collect", "export", "--db", db, "--payments", str(payments), "--out", str(data)
    )
    assert "holds the platform's participant identifiers" in result.output
    rows = list(csv.DictReader(payments.open()))
    planted = [
        platform_identifiers(["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"], 4, n) for n in range(6)
    ]
    assert sorted(r["participant_id"] for r in rows) == sorted(p["PROLIFIC_PID"] for p in planted)
    assert {r["state"] for r in rows} == {"finished"}
    assert all(float(r["minutes"]) >= 0 for r in rows)
    exported = data.read_text()
    assert not any(p["PROLIFIC_PID"] in exported or p["SESSION_ID"] in exported for p in planted)

    status = _invoke("collect", "status", "--db", db).output
    assert status.count("finished") >= 6 and "minutes per finished participant: median" in status
