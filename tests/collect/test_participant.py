"""The participant's path end to end: answers stored as given, resume, idempotence, export."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from collect_harness import Walker, admin_login, invite, study_data
from fastapi.testclient import TestClient

from attunebench.collect import crud
from attunebench.collect.db import Database, make_engine
from attunebench.collect.export import export_file
from attunebench.collect.study import parse_study
from attunebench.data.jsonl import read_conversations
from attunebench.data.validate import validate_file
from attunebench.models.base import ProviderError
from attunebench.models.mock import MockProvider


def _walk_full(client: TestClient, token: str) -> Walker:
    walker = Walker(client, token)
    walker.consent()
    walker.traits(age_band="18-30", note="night shifts")
    for n in range(2):
        walker.message(f"Message number {n} about my week.")
        walker.judge(choice="B" if n == 0 else "tie")
    walker.end()
    walker.survey()
    return walker


def _export(client: TestClient, tmp_path: Path) -> list[dict[str, Any]]:
    assert admin_login(client).status_code == 200
    response = client.get("/admin/export.jsonl")
    assert response.status_code == 200
    path = tmp_path / "export.jsonl"
    path.write_bytes(response.content)
    report = validate_file(path)
    assert report.ok, [str(p) for p in report.problems]
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def test_whole_session_is_exported_with_every_answer(
    client: TestClient, database_url: str, tmp_path: Path
) -> None:
    (token,) = invite(database_url)
    walker = _walk_full(client, token)
    assert "Thank you" in walker.page()
    (record,) = _export(client, tmp_path)
    assert record["source"]["kind"] == "collected"
    assert record["participant"]["traits"] == {"age_band": "18-30", "note": "night shifts"}
    turns = record["turns"]
    assert [t["user"] for t in turns] == [
        "Message number 0 about my week.",
        "Message number 1 about my week.",
    ]
    state = turns[0]["state"]
    assert state["emotions"] == ["sadness", "anxiety"] and state["primary"] == "sadness"
    assert (state["intensity"], state["valence"], state["arousal"]) == (4, -0.4, 0.7)
    assert state["panas"]["upset"] == 2 and len(state["panas"]) == 10
    first = turns[0]
    by_id = {r["id"]: r for r in first["responses"]}
    chosen = first["preference"]["chosen"]
    assert chosen.endswith("-b") and first["continued"] == chosen
    assert by_id[chosen]["behaviors"] == ["suggestion"]
    assert first["preference"]["comment"] == "Just listen to me."
    assert first["preference"]["comment_behaviors"] == ["reflection"]
    assert first["preference"]["strength"] == 2 and first["continued_by"] == "pick"
    assert first["need"] == {"text": "To be heard.", "behaviors": ["reflection"]}
    tie = turns[1]
    assert tie["preference"]["tie"] is True and "chosen" not in tie["preference"]
    assert tie["continued_by"] == "random" and tie["continued"][-1] in "ab"
    models = {r["model"] for t in turns for r in t["responses"]}
    assert len(models) == 2
    outcome = record["outcome"]
    assert outcome["rating"] == 4 and outcome["survey"] == {"overall": 4, "comments": "Fine."}
    assert outcome["final_state"]["emotions"] == ["relief"]


def test_chosen_reply_continues_the_conversation(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    walker.message("First message.")
    page = walker.page()
    reply_b = page.split("Reply B</h2>")[1].split("</p>")[0].split(">")[-1]
    walker.judge(choice="B")
    assert reply_b in walker.page()  # shown in the conversation so far


def test_reload_resumes_at_every_stage(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    assert walker.step() == "consent:0"
    walker.consent()
    assert walker.step() == walker.step() == "traits:0"
    walker.traits()
    assert walker.step() == "message:0"
    walker.message("Hello.")
    assert walker.step() == "judge:0"
    walker.judge()
    assert walker.step() == "message:1"
    for _ in range(2):
        walker.message("More.")
        walker.judge()
    assert walker.step() == "survey:3"  # max turns reached: no "end" needed
    walker.survey()
    assert walker.step() == "done:3"


def test_stale_or_repeated_posts_change_nothing(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    html = walker.page()
    form = {
        "csrf": "",
        "step": "message:0",
        "message": "Once.",
        "emotions": ["joy"],
        "intensity": "3",
        "valence": "0",
        "arousal": "50",
        **{
            f"panas_{i}": "1"
            for i in (
                "upset",
                "hostile",
                "alert",
                "ashamed",
                "inspired",
                "nervous",
                "determined",
                "attentive",
                "afraid",
                "active",
            )
        },
    }
    form["csrf"] = html.split('name="csrf" value="')[1].split('"')[0]
    for _ in range(3):  # a double click and a resubmitted page
        assert client.post(f"/p/{token}/message", data=form).status_code == 200
    walker.judge()
    assert walker.step() == "message:1"
    assert client.post(f"/p/{token}/message", data=form).status_code == 200
    assert walker.step() == "message:1"  # the old step did not add a turn


def test_may_end_only_after_min_turns(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    assert "End the conversation" not in walker.page()
    walker.end()
    assert walker.step() == "message:0"
    for _ in range(2):
        walker.message("Hi.")
        walker.judge()
    assert "End the conversation" in walker.page()
    walker.end()
    assert walker.step() == "survey:2"


def test_declining_consent_records_nothing_more(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.post("consent", {"agree": "no"})
    assert walker.step() == "declined:0"
    assert "chose not to take part" in walker.page()


def test_safety_notice_at_start_and_on_keywords(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    assert "If you are in danger" in walker.page()
    walker.consent()
    walker.traits()
    walker.message("Work was long.")
    assert "If you are in danger" not in walker.page()
    walker.judge()
    walker.message("I feel HOPELESS tonight.")
    assert "If you are in danger" in walker.page() and "555-0100" in walker.page()


def test_bad_answers_are_refused_and_not_stored(client: TestClient, database_url: str) -> None:
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    walker.post("message", {"message": "x" * 2001}, expect=422)
    response = walker.post("message", {"message": "ok", "emotions": ["nope"]}, expect=422)
    assert "is not one of the choices" in response.text
    walker.post("message", {"message": "ok", "emotions": ["joy"], "primary": "anger"}, expect=422)
    assert walker.step() == "message:0"


def test_failed_generation_can_be_retried(
    make_client: Any, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    outage = ProviderError("scripted outage", retryable=True, status=503)

    def flaky(spec: str, **options: Any) -> MockProvider:
        return MockProvider(spec.split("/", 1)[1], failures=[outage], **options)

    # Every model fails its first call; the message is kept and the replies can be retried.
    monkeypatch.setattr("attunebench.collect.pool.make_provider", flaky)
    client = make_client()
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    walker.message("Will this work?")
    assert walker.step() == "pending:0"
    assert "Will this work?" in walker.page() and "Get the replies" in walker.page()
    walker.post("generate", {})
    assert walker.step() == "judge:0"


def test_export_leaves_out_the_silent_and_on_request_the_unfinished_and_simulated(
    client: TestClient, database_url: str, tmp_path: Path
) -> None:
    finished, started, simulated, silent = invite(database_url, count=4)
    _walk_full(client, finished)
    for token in (started, simulated):
        walker = Walker(client, token)
        walker.consent()
        walker.traits()
        walker.message("Only one message.")
    Walker(client, silent).consent()
    study = parse_study(study_data())
    database = Database(make_engine(database_url))

    def exported(**chosen: bool) -> list[str]:
        path = tmp_path / "out.jsonl"
        with database.read() as session:
            export_file(path, crud.all_participants(session), study, **chosen)
        return sorted(c.source.kind for c in read_conversations(path))

    try:
        with database.write() as session:  # as the open link stores a simulated participant
            row = crud.participant_by_token(session, simulated)
            assert row is not None
            row.enrolment = "simulated"
        assert exported() == ["collected", "collected", "simulated"]  # never the silent one
        assert exported(finished_only=True) == ["collected"]
        assert exported(simulated=False) == ["collected", "collected"]
        assert exported(finished_only=True, simulated=False) == ["collected"]
    finally:
        database.dispose()
