"""Careless participation: each signal holds where it should and not where it should not, the
attention check, what the admin and the export show; then the planted truth: `collect simulate
--careless 0.25` sends participants who click through, the study marks them (at least 90% of
them, at most 5% of the others), and `run` leaves their conversations out, counted, unless
`--include-careless` keeps them."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from collect_harness import Serve, Walker, admin_login, invite, study_data
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.collect import crud
from attunebench.collect.db import Database, make_engine
from attunebench.collect.persona import corpus_messages
from attunebench.collect.quality import _repeats
from attunebench.collect.simulate import simulate
from attunebench.collect.study import StudyError, parse_study

CHECK = {
    "text": "To show you are reading, choose 'rarely'.",
    "options": ["never", "rarely", "often"],
    "answer": "rarely",
}


def _signals(database_url: str) -> list[list[str]]:
    database = Database(make_engine(database_url))
    with database.read() as session:
        held = [list(p.careless_signals or []) for p in crud.all_participants(session)]
    database.dispose()
    return held


def _walk(walker: Walker, messages: list[str], emotions: list[list[str]], **survey: str) -> None:
    walker.consent()
    walker.traits()
    for text, felt in zip(messages, emotions, strict=True):
        walker.message(text, emotions=felt, primary=felt[0])
        walker.judge()
    walker.survey(**survey)


def test_each_signal_and_the_attention_check(make_client: Any, database_url: str) -> None:
    quality = {"min_seconds_per_turn": 0, "attention_check": CHECK}  # nothing here is slow
    client = make_client(parse_study(study_data(quality=quality)))
    careful, clicking, inattentive = (Walker(client, t) for t in invite(database_url, 3))
    varied = ["My flatmate ignores me.", "I tried talking to her.", "Now I feel worse about it."]
    _walk(careful, varied, [["sadness"], ["anxiety"], ["anger"]], q_attention_check="rarely")
    _walk(clicking, ["ok", "ok", "ok."], [["joy"]] * 3, q_attention_check="rarely")
    _walk(inattentive, varied, [["sadness"], ["anxiety"], ["anger"]], q_attention_check="never")
    assert _signals(database_url) == [
        [],
        ["repeated", "short", "straight-lined"],
        ["attention check"],
    ]
    listing = client.get("/admin/participants").text if admin_login(client) else ""
    assert listing.count(">careless</span>") == 2
    assert "repeated, short, straight-lined" in listing
    dashboard = client.get("/admin").text
    assert "2 participants marked careless" in dashboard and "under 0.0 s" in dashboard


def test_repeats_count_near_copies_and_not_anagrams() -> None:
    """Planted: two near-copies of the first message (case, spacing, one letter) and one of
    the third; the trap, a message of the same letters in another order, which difflib's cheap
    bounds (asked first) cannot tell from a copy and its ratio can."""
    messages = [
        "My boss shouted at me today.",
        "my boss  shouted at me today!",
        "I cannot sleep before exams.",
        "My bass shouted at me today.",
        ".yadot em ta detuohs ssob yM",
        "I cannot sleep before exams",
    ]
    assert sum(_repeats(messages, 0.9)) == 3
    assert sum(_repeats(messages, 1.0)) == 0  # the copies differ, and nothing repeats exactly
    assert sum(_repeats(messages[4:5] * 3, 1.0)) == 2


def test_the_attention_check_id_is_its_own() -> None:
    end = {"questions": [{"id": "attention_check", "text": "?", "kind": "text"}]}
    with pytest.raises(StudyError, match="the attention check's"):
        parse_study(study_data(end=end, quality={"attention_check": CHECK}))


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, f"{args[:2]}: {result.output}"
    return result.output


def _run(data: Path, out: Path, cache: Path, *extra: str) -> dict[str, Any]:
    models = ("--model", "baseline/random", "--model", "baseline/lexicon")
    tasks = ("--task", "emotion", "--task", "preference")
    _invoke(
        "run",
        "--data",
        str(data),
        *models,
        *tasks,
        "--out",
        str(out),
        "--no-progress",
        "--cache",
        str(cache),
        *extra,
    )
    return dict(json.loads((out / "run.json").read_text()))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_planted_click_through_is_marked_and_left_out(serve: Serve, tmp_path: Path) -> None:
    study = parse_study(
        study_data(
            enrolment={"open": True, "cap": 60, "simulated": True},
            turns={"min": 2, "max": 4},
            traits=[],
            quality={"min_seconds_per_turn": 0.5},
        )
    )
    base, db = serve(study)
    status = _invoke("collect", "status", "--db", db, "--base-url", base)
    join = re.search(r"open link: (\S+)", status)
    assert join
    _, conversations = corpus_messages()
    outcome = asyncio.run(
        simulate(
            join.group(1),
            40,
            seed=5,
            conversations=conversations,
            concurrency=8,
            careless=0.25,
            think_s=0.3,
        )
    )
    assert outcome.finished == 40 and not outcome.problems
    clicked = {link.removeprefix("/p/") for link in outcome.careless_links}
    assert 5 <= len(clicked) <= 16  # about a quarter of 40

    data = tmp_path / "collected.jsonl"
    _invoke("collect", "export", "--db", db, "--out", str(data))
    records = [json.loads(line) for line in data.read_text().splitlines()]
    marked = {
        r["participant"]["id"] for r in records if r["context"]["labels"]["careless"] == "yes"
    }
    database = Database(make_engine(db))
    with database.read() as session:
        truth = {crud.participant_by_token(session, token).public_id for token in clicked}  # type: ignore[union-attr]
    database.dispose()
    careful = {r["participant"]["id"] for r in records} - truth
    assert len(marked & truth) >= 0.9 * len(truth), (marked, truth)
    assert len(marked & careful) <= 0.05 * len(careful), marked & careful

    cache = tmp_path / "cache.sqlite"
    info = _run(data, tmp_path / "run", cache)
    assert info["left_out"]["emotion"]["careless conversations"] == len(marked)
    evaluated = (tmp_path / "run" / "conversations.jsonl").read_text()
    assert not any(f'"id":"{pid}"' in evaluated.replace(" ", "") for pid in marked)
    report = tmp_path / "report"
    _invoke("report", str(tmp_path / "run"), "--out", str(report), "--resamples", "100")
    page = (report / "report.html").read_text()
    assert f"{len(marked)} careless conversations left out" in page

    kept = _run(data, tmp_path / "kept", cache, "--include-careless")
    assert "careless conversations" not in json.dumps(kept["left_out"])


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_collect_simulate_careless_on_the_command_line(serve: Serve) -> None:
    study = parse_study(
        study_data(
            enrolment={"open": True, "cap": 20, "simulated": True},
            turns={"min": 2, "max": 3},
            traits=[],
            quality={"min_seconds_per_turn": 0.5},
        )
    )
    base, db = serve(study)
    join = re.search(
        r"open link: (\S+)", _invoke("collect", "status", "--db", db, "--base-url", base)
    )
    assert join
    args = ["--participants", "8", "--seed", "2", "--careless", "0.5", "--think-s", "0.3"]
    said = _invoke("collect", "simulate", "--url", join.group(1), *args)
    clicked = re.search(r"(\d+) clicked through", said)
    assert clicked and 1 <= int(clicked.group(1)) <= 7, said
    status = _invoke("collect", "status", "--db", db)
    assert f"{clicked.group(1)} participants marked careless" in status
