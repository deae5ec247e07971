"""Retest probes: an earlier turn's question asked again later in the session, as any question
is; its answer stored apart, in the turn's own terms, exported as a probe (never gold), counted
in `collect status`, deleted with the participant; and simulated participants who answer it
differently from their first answer at the rate asked for."""

from __future__ import annotations

import asyncio
import html
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from collect_harness import PANAS, Serve, Walker, admin_login, hidden, invite, study_data
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.collect.crud import JOIN_SLUG, all_participants, get_meta
from attunebench.collect.db import Database, make_engine
from attunebench.collect.export import conversation
from attunebench.collect.models import ProbeRow, TurnRow
from attunebench.collect.retest import planned
from attunebench.collect.simulate import simulate
from attunebench.collect.study import Study, parse_study
from attunebench.data.schema import Conversation

# Words that would tell a participant the question was asked before.
REPEAT_WORDS = ("again", "repeat", "before", "earlier", "already", "previous", "retest", "probe",
                "consisten", "check", "remember")  # fmt: skip
STATE = {"emotions": ["sadness", "anxiety"], "primary": "sadness", "intensity": "4"}


def _study(**overrides: Any) -> Study:
    data = {"retest": {"share": 1.0}, "turns": {"min": 3, "max": 3}, "traits": [], **overrides}
    return parse_study(study_data(**data))


def _visible(page: str) -> str:
    body = re.sub(r"<(script|style|title)[^>]*>.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def _stored(url: str, study: Study) -> list[Conversation]:
    database = Database(make_engine(url))
    try:
        with database.read() as session:
            return [conversation(p, study) for p in all_participants(session) if p.turns]
    finally:
        database.dispose()


def _answer_probe(walker: Walker, page: str, turn: int) -> str:
    """Answer the probe on `page`: the emotion check with one emotion, or Reply A."""
    assert re.search(rf'data-step="probe:{turn}:(state|pick)"', page), page[:400]
    text = _visible(page)
    for word in REPEAT_WORDS:
        assert word not in text.lower(), f"the page says {word!r}"
    assert f"Message {turn} of mine." in text  # the message is shown again
    if 'name="choice"' in page:
        walker.post("probe", {"choice": "A"})
        return "pick"
    assert " checked" not in page.split('name="emotions"', 1)[1].split("</fieldset>")[0]
    panas = {f"panas_{item}": "3" for item in PANAS}
    walker.post("probe", {"emotions": ["anger"], "primary": "anger", **panas})
    return "state"


def _walk(client: TestClient, token: str) -> tuple[Walker, dict[int, str]]:
    """Three turns with every turn probed: none right after its own pick; turn 0's after turn
    1's pick; turns 1 and 2's once the last turn is picked, before the survey."""
    walker, kinds = Walker(client, token), {}
    walker.consent()
    walker.message("Message 0 of mine.", **STATE)
    walker.judge(choice="B")
    assert walker.step() == "message:1"  # not asked right after the question it repeats
    walker.message("Message 1 of mine.", **STATE)
    walker.judge(choice="tie")
    kinds[0] = _answer_probe(walker, walker.page(), 0)
    walker.message("Message 2 of mine.", **STATE)
    walker.judge(choice="A")
    for turn in (1, 2):
        kinds[turn] = _answer_probe(walker, walker.page(), turn)
    assert walker.step().startswith("survey")
    walker.survey()
    return walker, kinds


def test_each_turn_is_asked_again_later_and_stored_apart(
    make_client: Any, database_url: str
) -> None:
    study = _study()
    client = make_client(study)
    seen: set[str] = set()
    for _ in range(8):  # each probe's question is drawn: walk until both kinds came up
        (token,) = invite(database_url)
        _, kinds = _walk(client, token)
        seen |= set(kinds.values())
        if seen == {"state", "pick"}:
            break
    assert seen == {"state", "pick"}
    for record in _stored(database_url, study):
        assert [p.turn for p in record.probes] == [0, 1, 2]
        assert [p.after for p in record.probes] == [1, 2, 2]
        for probe in record.probes:
            turn = record.turns[probe.turn]
            # the first answers stay the turn's: the gold
            assert turn.state is not None and turn.state.primary == "sadness"
            if probe.preference is not None:
                # "A" on a page showing the replies swapped is the turn's B
                assert probe.state is None and probe.preference.chosen == turn.responses[1].id
            else:
                assert probe.state is not None and probe.state.emotions == ("anger",)


def _replies(page: str) -> dict[str, str]:
    reply = r'aria-label="Reply ([AB])">\s*<h2>[^<]*</h2>\s*<p class="prose">([^<]*)'
    return dict(re.findall(reply, page))


def test_a_pick_is_asked_with_the_replies_swapped(make_client: Any, database_url: str) -> None:
    study = _study(questions={"emotions": "off", "primary": "off", "panas": "off"})
    client = make_client(study)  # no emotion check to ask again: every probe is a pick
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.post("message", {"message": "Message 0 of mine."})
    judged = walker.page()
    walker.judge(choice="B")
    walker.post("message", {"message": "Message 1 of mine."})
    walker.judge(choice="A")
    probe = walker.page()
    first, shown = _replies(judged), _replies(probe)
    assert shown == {"A": first["B"], "B": first["A"]}
    assert "Message 0 of mine." in probe and "Message 1 of mine." not in probe  # as it was
    walker.post("probe", {"choice": "B"})  # the page's B: the turn's A
    (record,) = _stored(database_url, study)
    assert record.turns[0].preference is not None
    assert record.turns[0].preference.chosen == record.turns[0].responses[1].id  # unchanged
    assert record.probes[0].preference is not None
    assert record.probes[0].preference.chosen == record.turns[0].responses[0].id


def test_a_stale_or_incomplete_probe_answer_stores_nothing(
    make_client: Any, database_url: str
) -> None:
    study = _study(questions={"emotions": "off", "primary": "off", "panas": "off"})
    client = make_client(study)
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    for n in range(2):
        walker.post("message", {"message": f"Message {n} of mine."})
        walker.judge()
    refused = walker.post("probe", {}, expect=422)
    assert "Please pick Reply A" in refused.text
    page = walker.page()
    stale = {"csrf": hidden(page, "csrf"), "step": "probe:0:state", "emotions": ["joy"]}
    assert client.post(f"/p/{token}/probe", data=stale).status_code == 200  # just the page
    assert _stored(database_url, study)[0].probes == ()


def test_probes_are_counted_exported_and_deleted(
    make_client: Any, database_url: str, tmp_path: Path
) -> None:
    study = _study()
    client = make_client(study)
    (token,) = invite(database_url)
    _, kinds = _walk(client, token)
    said = CliRunner().invoke(app, ["collect", "status", "--db", database_url])
    state, pick = list(kinds.values()).count("state"), list(kinds.values()).count("pick")
    assert f"retest probes 3 ({state} emotion, {pick} pick)" in said.output, said.output
    dashboard = admin_login(client).text
    assert f"<td>3 ({state}, {pick})</td>" in dashboard
    out = tmp_path / "out.jsonl"
    exported = CliRunner().invoke(
        app, ["collect", "export", "--db", database_url, "--out", str(out)]
    )
    assert exported.exit_code == 0, exported.output
    (line,) = out.read_text().splitlines()
    assert [p["turn"] for p in json.loads(line)["probes"]] == [0, 1, 2]
    public_id = json.loads(line)["participant"]["id"]
    shown = client.get(f"/admin/participants/{public_id}").text
    assert "Questions asked again" in shown and shown.count("asked after turn") == 3
    listing = client.get("/admin/participants").text
    client.post(f"/admin/participants/{public_id}/delete", data={"csrf": hidden(listing, "csrf")})
    database = Database(make_engine(database_url))
    try:
        with database.read() as session:
            assert session.scalar(select(func.count()).select_from(ProbeRow)) == 0
    finally:
        database.dispose()


def test_the_share_of_turns_probed_is_the_studys() -> None:
    turn = TurnRow(index=0, state={"emotions": ["joy"]}, picked_at=datetime.now(UTC))
    unpicked = TurnRow(index=0, state={"emotions": ["joy"]}, picked_at=None)
    for share in (0.0, 0.1, 0.5, 1.0):
        study = _study(retest={"share": share})
        draws = [planned(study, f"p{n}", turn) for n in range(4000)]
        probed = sum(d is not None for d in draws) / len(draws)
        assert abs(probed - share) < 0.03, (share, probed)
        if share:
            assert abs(draws.count("state") / (probed * len(draws)) - 0.5) < 0.06
        assert planned(study, "p1", unpicked) is None
    no_emotions = TurnRow(index=0, state={}, picked_at=datetime.now(UTC))
    assert {planned(_study(), f"p{n}", no_emotions) for n in range(50)} == {"pick"}


def _simulated(serve: Serve, noise: float) -> list[Conversation]:
    study = _study(
        questions={"panas": "off"},
        enrolment={"open": True, "cap": 100, "simulated": True},
    )
    base, url = serve(study)
    database = Database(make_engine(url))
    try:
        with database.read() as session:
            slug = get_meta(session, JOIN_SLUG)
    finally:
        database.dispose()
    messages = [["I feel so alone lately.", "Work makes me anxious.", "I am angry at him."]]
    done = asyncio.run(simulate(f"{base}/join/{slug}", 3, 5, messages, retest_noise=noise))
    assert done.finished == 3, done.problems
    return _stored(url, study)


def _agrees(record: Conversation) -> list[bool]:
    out = []
    for probe in record.probes:
        turn = record.turns[probe.turn]
        if probe.preference is not None and turn.preference is not None:
            first = (turn.preference.chosen, turn.preference.tie)
            out.append((probe.preference.chosen, probe.preference.tie) == first)
        elif probe.state is not None and turn.state is not None:
            out.append(probe.state.primary == turn.state.primary)
    return out


def test_simulated_participants_answer_again_with_the_noise_asked_for(serve: Serve) -> None:
    steady = [a for record in _simulated(serve, 0.0) for a in _agrees(record)]
    assert len(steady) == 9 and all(steady)  # every turn probed
    noisy = [a for record in _simulated(serve, 1.0) for a in _agrees(record)]
    assert len(noisy) == 9 and not any(noisy)
