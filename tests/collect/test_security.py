"""Anonymity of the pool, admin authentication, CSRF, escaping, rate limits, headers."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from collect_harness import ADMIN_PASSWORD, POOL, Walker, admin_login, hidden, invite, study_data
from fastapi.testclient import TestClient
from markupsafe import escape

from attunebench.collect.study import parse_study

SCRIPT = "<script>steal('injected')</script><img src=x onerror=steal()>"


def _full_session(client: TestClient, token: str, text: str = "Hello there.") -> Walker:
    walker = Walker(client, token)
    walker.consent()
    walker.traits(age_band="18-30", note=text)
    walker.message(text, need=text)
    walker.judge(comment=text)
    walker.message(text, need=text)
    walker.judge(choice="tie", comment=text)
    walker.page()
    walker.end()
    walker.survey(q_comments=text)
    walker.client.get(f"/p/{token}/support")
    return walker


def test_no_model_identity_reaches_participant_pages(client: TestClient, database_url: str) -> None:
    tokens = invite(database_url, 3)  # enough conversations to use every model of the pool
    forbidden = {"mock"} | set(POOL) | {spec.split("/", 1)[1] for spec in POOL}
    for token in tokens:
        walker = _full_session(client, token)
        errors = [  # error pages are participant-facing too
            client.post(f"/p/{token}/judge", data={}),
            client.post(
                f"/p/{token}/message",
                data={"csrf": hidden(walker.seen[0].text, "csrf"), "message": "x" * 5000},
            ),
            client.get(f"/p/{token}/nowhere"),
        ]
        for response in walker.seen + errors:
            body = response.text + " ".join(f"{k}: {v}" for k, v in response.headers.items())
            for name in forbidden:
                assert name.lower() not in body.lower(), (name, str(response.url))
    assert admin_login(client).status_code == 200
    exported = client.get("/admin/export.jsonl").text
    assert all(spec in exported for spec in POOL)  # every model of the pool was talked to


ADMIN_GETS = ["/admin", "/admin/participants", "/admin/participants/p123", "/admin/export.jsonl"]
ADMIN_POSTS = ["/admin/logout", "/admin/invitations", "/admin/participants/p123/delete"]


def test_admin_routes_refuse_without_a_session(client: TestClient) -> None:
    for path in ADMIN_GETS:
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/admin/login"
    for path in ADMIN_POSTS:
        assert client.post(path, data={"csrf": "x", "count": "5"}).status_code == 401
    client.cookies.set("attunebench_admin", "forged.value.here", domain="testserver.local")
    assert client.get("/admin", follow_redirects=False).status_code == 303


def test_login_wrong_password_logout_and_cookie_flags(client: TestClient) -> None:
    response = admin_login(client, "wrong password")
    assert "Wrong password" in response.text
    assert client.get("/admin", follow_redirects=False).status_code == 303
    page = client.get("/admin/login")
    login = client.post(
        "/admin/login",
        data={"csrf": hidden(page.text, "csrf"), "password": ADMIN_PASSWORD},
        follow_redirects=False,
    )
    cookie = login.headers["set-cookie"].lower()
    assert all(flag in cookie for flag in ("secure", "httponly", "samesite=strict"))
    dashboard = client.get("/admin")
    assert dashboard.status_code == 200 and "Progress" in dashboard.text
    client.post("/admin/logout", data={"csrf": hidden(dashboard.text, "csrf")})
    assert client.get("/admin", follow_redirects=False).status_code == 303


def test_posts_without_csrf_are_refused(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    for action in ("consent", "traits", "message", "generate", "judge", "end", "survey"):
        for csrf in (None, "0" * 64):
            data = {"step": walker.step(), "agree": "yes"}
            if csrf is not None:
                data["csrf"] = csrf
            assert client.post(f"/p/{token}/{action}", data=data).status_code == 403
    assert walker.step() == "consent:0"
    other = invite(database_url)[0]  # a token's CSRF value does not work for another token
    stolen = hidden(Walker(client, other).page(), "csrf")
    data = {"csrf": stolen, "step": "consent:0", "agree": "yes"}
    assert client.post(f"/p/{token}/consent", data=data).status_code == 403
    client.get("/admin/login")
    assert client.post("/admin/login", data={"password": ADMIN_PASSWORD}).status_code == 403
    assert admin_login(client).status_code == 200
    for path in ADMIN_POSTS:
        assert client.post(path, data={"count": "2"}).status_code == 403
    assert client.get("/admin").status_code == 200  # still logged in: logout was refused too


def test_injected_script_is_inert_everywhere(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = _full_session(client, token, text=SCRIPT)
    assert admin_login(client).status_code == 200
    public_id = re.search(
        r"/admin/participants/(p[0-9a-f]+)", client.get("/admin/participants").text
    ).group(1)  # type: ignore[union-attr]
    detail = client.get(f"/admin/participants/{public_id}")
    pages = [r for r in walker.seen if r.headers.get("content-type", "").startswith("text/html")]
    shown = [r.text for r in pages if "injected" in r.text] + [detail.text]
    assert len(shown) >= 3  # the conversation pages and the admin view show the text
    for html in shown:
        assert "<script>steal" not in html and "<img" not in html
        assert str(escape(SCRIPT)) in html
    # traits, 2 messages, 2 needs, 2 comments and the survey
    assert detail.text.count(str(escape(SCRIPT))) >= 8


def test_participant_rate_limit(make_client: Any, database_url: str) -> None:
    client = make_client(parse_study(study_data(limits={"posts_per_minute": 3})))
    (token,) = invite(database_url)
    walker = Walker(client, token)
    statuses = [
        client.post(
            f"/p/{token}/end", data={"csrf": hidden(walker.page(), "csrf"), "step": "x"}
        ).status_code
        for _ in range(5)
    ]
    assert statuses == [200, 200, 200, 429, 429]
    retry = client.post(f"/p/{token}/generate", data={"csrf": hidden(walker.page(), "csrf")})
    assert retry.status_code == 429  # retrying replies calls the models: limited too
    other = Walker(client, invite(database_url)[0])
    other.consent()  # limits are per participant


def test_tokens_are_unguessable_and_unknown_ones_look_alike(
    client: TestClient, database_url: str
) -> None:
    tokens = invite(database_url, 20)
    assert len(set(tokens)) == 20 and all(len(t) >= 43 for t in tokens)
    missing = client.get("/p/" + "A" * 43)
    malformed = client.get("/p/x")
    assert missing.status_code == malformed.status_code == 404
    assert missing.text == malformed.text


def test_headers_csp_and_body_limit(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    response = client.get(f"/p/{token}")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp and "unsafe" not in csp
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "no-store"
    assert "<script>" not in response.text and 'src="/static/collect.js"' in response.text
    assert "onclick" not in response.text and "style=" not in response.text
    assert client.get("/static/collect.js").status_code == 200
    big = client.post(
        f"/p/{token}/message",
        content=b"x" * 300_000,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert big.status_code == 413


def test_deletion_on_request_erases_everything(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    _full_session(client, token)
    assert admin_login(client).status_code == 200
    listing = client.get("/admin/participants").text
    public_id = re.search(r"/admin/participants/(p[0-9a-f]+)", listing).group(1)  # type: ignore[union-attr]
    client.post(f"/admin/participants/{public_id}/delete", data={"csrf": hidden(listing, "csrf")})
    assert client.get(f"/p/{token}").status_code == 404
    assert client.get("/admin/export.jsonl").content == b""
    from attunebench.collect.db import Database, make_engine
    from attunebench.collect.models import ReplyRow, TurnRow

    database = Database(make_engine(database_url))
    with database.read() as session:
        assert session.query(TurnRow).count() == session.query(ReplyRow).count() == 0
    database.dispose()


def test_invitations_from_the_admin_page_work(client: TestClient) -> None:
    dashboard = admin_login(client)
    page = client.post(
        "/admin/invitations", data={"csrf": hidden(dashboard.text, "csrf"), "count": "2"}
    )
    links = re.findall(r"https://testserver/p/[\w-]+", page.text)
    assert len(links) == 2
    assert client.get(httpx.URL(links[0]).path).status_code == 200


@pytest.mark.parametrize("count", ["0", "1001", "many"])
def test_invitation_count_is_checked(client: TestClient, count: str) -> None:
    dashboard = admin_login(client)
    response = client.post(
        "/admin/invitations", data={"csrf": hidden(dashboard.text, "csrf"), "count": count}
    )
    assert response.status_code == 400
