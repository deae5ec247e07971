"""The open link (cap, screening, simulated participants), deletion codes and the admin lookup,
rate limits shared by app processes, and generation failures counted per model."""

from __future__ import annotations

import re
from typing import Any

import pytest
from collect_harness import POOL, Walker, admin_login, hidden, invite, study_data
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from attunebench import cli
from attunebench.collect.db import Database, make_engine
from attunebench.collect.progress import progress
from attunebench.collect.study import parse_study
from attunebench.models.base import ProviderError
from attunebench.models.mock import MockProvider

SCREENING = {"text": "Are you 18 or older?", "options": ["yes", "no"], "eligible": ["yes"]}


def _open_study(**enrolment: Any) -> Any:
    return parse_study(study_data(enrolment={"open": True, "cap": 3, **enrolment}))


def _join_path(client: TestClient) -> str:
    dashboard = admin_login(client).text
    found = re.search(r"https://testserver(/join/[\w-]+)", dashboard)
    assert found, "the dashboard shows the open link"
    return found.group(1)


def test_open_link_enrols_up_to_the_cap(make_client: Any) -> None:
    client = make_client(_open_study())
    join = _join_path(client)
    assert client.get("/join/not-the-slug").status_code == 404
    links = []
    for _ in range(3):
        response = client.post(join, data={}, follow_redirects=False)
        assert response.status_code == 303
        links.append(response.headers["location"])
    assert len(set(links)) == 3
    full = client.post(join, data={}, follow_redirects=False)
    assert full.status_code == 409 and "full" in full.text
    page = client.get(links[0]).text
    assert f"https://testserver{links[0]}" in page  # the personal link, to keep
    dashboard = client.get("/admin").text
    assert "3 of 3" in dashboard


def test_screening_turns_people_away_and_keeps_nothing(make_client: Any, database_url: str) -> None:
    client = make_client(_open_study(screening=SCREENING))
    join = _join_path(client)
    page = client.get(join).text
    assert "Are you 18 or older?" in page and 'name="screening"' in page
    assert client.post(join, data={}).status_code == 422  # unanswered: asked again
    refused = client.post(join, data={"screening": "no"}, follow_redirects=False)
    assert refused.status_code == 200 and "looking for other participants" in refused.text
    taken = client.post(join, data={"screening": "yes"}, follow_redirects=False)
    assert taken.status_code == 303
    database = Database(make_engine(database_url))
    with database.read() as session:
        assert progress(session, _open_study(screening=SCREENING)).open_enrolled == 1
    database.dispose()


def test_simulated_participants_only_where_the_study_allows(
    make_client: Any, database_url: str
) -> None:
    client = make_client(_open_study())
    join = _join_path(client)
    assert client.post(join, data={"simulated": "1"}).status_code == 403
    client = make_client(_open_study(simulated=True))
    join = _join_path(client)
    assert client.post(join, data={"simulated": "1"}, follow_redirects=False).status_code == 303
    database = Database(make_engine(database_url))
    with database.read() as session:
        now = progress(session, _open_study(simulated=True))
    database.dispose()
    assert (now.open_enrolled, now.simulated) == (1, 1)


def test_the_open_link_needs_a_cap() -> None:
    from attunebench.collect.study import StudyError

    with pytest.raises(StudyError, match="enrolment: an open link needs a cap"):
        parse_study(study_data(enrolment={"open": True}))


def test_deletion_code_and_lookup_by_link_or_code(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    for _ in range(2):
        walker.message("Hi.")
        walker.judge()
    walker.end()
    walker.survey()
    done = walker.page()
    code = re.search(r'<p class="code"><strong>([0-9A-Z-]+)</strong>', done)
    assert code, "the thank-you page shows a deletion code"
    dashboard = admin_login(client).text
    csrf = hidden(dashboard, "csrf")
    for quoted in (f"https://study.example/p/{token}", code.group(1).lower().replace("-", " ")):
        found = client.post(
            "/admin/lookup", data={"csrf": csrf, "q": quoted}, follow_redirects=False
        )
        assert found.status_code == 303 and found.headers["location"].startswith(
            "/admin/participants/p"
        )
    missing = client.post("/admin/lookup", data={"csrf": csrf, "q": "ZZZZ-ZZZZ-ZZZZ"})
    assert missing.status_code == 404 and "No participant has that link" in missing.text


def test_rate_limits_hold_across_app_processes(make_client: Any, database_url: str) -> None:
    study = parse_study(study_data(limits={"posts_per_minute": 3}))
    first, second = make_client(study), make_client(study)  # two apps on one database
    (token,) = invite(database_url)
    csrf = hidden(Walker(first, token).page(), "csrf")
    statuses = [
        app.post(f"/p/{token}/end", data={"csrf": csrf, "step": "x"}).status_code
        for app in (first, second, first, second, first)
    ]
    assert statuses == [200, 200, 200, 429, 429]


def test_failing_generation_is_counted_per_model(
    make_client: Any, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    outage = ProviderError("HTTP 503 from the model server", retryable=True, status=503)

    def failing(spec: str, **options: Any) -> MockProvider:
        return MockProvider(spec.split("/", 1)[1], failures=[outage] * 5, **options)

    monkeypatch.setattr("attunebench.collect.pool.make_provider", failing)
    client = make_client()
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    walker.message("Will this work?")
    walker.post("generate", {})
    assert walker.step() == "pending:0"
    dashboard = admin_login(client).text
    assert "replies could not be generated" in dashboard
    assert "HTTP 503 from the model server" in dashboard
    database = Database(make_engine(database_url))
    with database.read() as session:
        now = progress(session, parse_study(study_data()))
    database.dispose()
    failed = {spec: m.failures for spec, m in now.per_model.items() if m.failures}
    assert len(failed) == 2 and set(failed) <= set(POOL) and all(n == 2 for n in failed.values())
    assert now.waiting_turns == 1 and now.generation_failures == 4
    status = CliRunner().invoke(cli.app, ["collect", "status", "--db", database_url]).output
    assert "1 waiting for replies" in status and "4 generation failures" in status
    assert "HTTP 503 from the model server" in status


def test_joins_are_limited_per_address(make_client: Any) -> None:
    study = parse_study(
        study_data(enrolment={"open": True, "cap": 100}, limits={"joins_per_minute": 2})
    )
    client = make_client(study)
    join = _join_path(client)
    statuses = [client.post(join, data={}, follow_redirects=False).status_code for _ in range(3)]
    assert statuses == [303, 303, 429]


def _joins(client: TestClient, join: str, forwarded: str | None, count: int) -> list[int]:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    return [
        client.post(join, data={}, headers=headers, follow_redirects=False).status_code
        for _ in range(count)
    ]


def test_a_forwarded_address_is_ignored_unless_its_proxy_is_trusted(make_client: Any) -> None:
    study = parse_study(
        study_data(enrolment={"open": True, "cap": 100}, limits={"joins_per_minute": 2})
    )
    client = make_client(study)  # no trusted proxy: the socket's address, whatever the header
    join = _join_path(client)
    assert _joins(client, join, "203.0.113.7", 2) == [303, 303]
    assert _joins(client, join, "203.0.113.8", 1) == [429]  # a spoofed header dodges nothing


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(make_client: Any) -> None:
    study = parse_study(
        study_data(enrolment={"open": True, "cap": 100}, limits={"joins_per_minute": 2})
    )
    # TestClient connects as "testclient": here, the reverse proxy
    client = make_client(study, forwarded_allow_ips="10.0.0.0/8, testclient")
    join = _join_path(client)
    assert _joins(client, join, "203.0.113.7", 3) == [303, 303, 429]
    assert _joins(client, join, "203.0.113.8", 2) == [303, 303]
    # a client that put its own address first cannot pick its key: the proxy appends the peer
    assert _joins(client, join, "203.0.113.8, 198.51.100.4", 2) == [303, 303]
    assert _joins(client, join, "203.0.113.9, 198.51.100.4", 1) == [429]
