"""The time a study costs a participant: planted durations come back as the median and 90th
percentile per finished participant and per turn (an unfinished participant's long stay is not
a finisher's), in `collect status`, on /admin and in the export; and a turn's careless "fast"
signal counts the participant's own time, never the models'."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from collect_harness import admin_login, study_data
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.collect.db import Database, make_engine
from attunebench.collect.models import ParticipantRow, ReplyRow, TurnRow
from attunebench.collect.progress import progress
from attunebench.collect.quality import signals
from attunebench.collect.questions import Quality
from attunebench.collect.schemas import Spread
from attunebench.collect.study import parse_study
from attunebench.collect.timing import own_seconds

START = datetime(2026, 12, 1, 9, 0, tzinfo=datetime.now().astimezone().tzinfo).astimezone()


def _participant(n: int, turns: list[tuple[float, float, float]], finished: bool) -> ParticipantRow:
    """Consent a minute after arrival, then turns of (writing, the models, reading and picking)
    minutes; finished a minute after the last pick."""
    row = ParticipantRow(
        public_id=f"p{n:012d}",
        token_hash=f"{n:064d}",
        deletion_code=f"CODE-{n:04d}-XXXX",
        enrolment="invitation",
        created_at=START,
        consented_at=START + timedelta(minutes=1),
    )
    moment = START + timedelta(minutes=1)
    for index, (writing, models, reading) in enumerate(turns):
        written = moment + timedelta(minutes=writing)
        ready = written + timedelta(minutes=models)
        moment = ready + timedelta(minutes=reading)
        turn = TurnRow(
            index=index,
            user_text="Hello there, how are you?",
            state={},
            created_at=written,
            choice="A",
            continued="A",
            picked_at=moment,
        )
        turn.replies = [
            ReplyRow(
                position=p, model="mock/a", text="Hi.", flags=[], latency_ms=0, created_at=ready
            )
            for p in "AB"
        ]
        row.turns.append(turn)
    if finished:
        row.finished_at = moment + timedelta(minutes=1)
    return row


def _even(minutes: list[float]) -> list[tuple[float, float, float]]:
    """Turns of these minutes: half writing, a tenth of a minute of models, the rest reading."""
    return [(m / 2, 0.1, m / 2 - 0.1) for m in minutes]


def test_planted_durations(make_client: Any, database_url: str, tmp_path: Path) -> None:
    study = parse_study(study_data())
    client = make_client(study)
    plans = [[1.0, 3.0], [2.0, 4.0, 6.0], [5.0, 7.0], [8.0, 10.0], [12.0, 14.0]]
    database = Database(make_engine(database_url))
    with database.write() as session:
        for n, plan in enumerate(plans):
            session.add(_participant(n, _even(plan), finished=True))
        session.add(_participant(99, _even([200.0]), finished=False))  # long, but not finished
    with database.read() as session:
        now = progress(session, study)
    database.dispose()
    finished = [1 + sum(plan) + 1 for plan in plans]  # consent, the turns, the survey
    turns = [m for plan in plans for m in plan] + [200.0]
    for spread, planted in ((now.minutes_per_participant, finished), (now.minutes_per_turn, turns)):
        assert spread.n == len(planted)
        assert spread.median == round(float(np.median(planted)), 3)
        assert spread.p90 == round(float(np.percentile(planted, 90)), 3)
    assert now.minutes_per_participant == Spread(n=5, median=14.0, p90=24.8)  # 6, 14, 14, 20, 28

    said = CliRunner().invoke(app, ["collect", "status", "--db", database_url]).output
    assert "minutes per finished participant: median 14.0, 90th percentile 24.8 (n=5)" in said
    admin_login(client)
    assert "24.8" in client.get("/admin").text

    out = tmp_path / "export.jsonl"
    assert CliRunner().invoke(app, ["collect", "export", "--db", database_url, "--out", str(out)])
    durations = [json.loads(line)["context"]["labels"]["duration_minutes"] for line in out.open()]
    assert sorted(map(float, durations)) == sorted([*finished, 201.0])


def test_a_fast_turn_is_the_participants_own_time_not_the_models() -> None:
    # A minute a turn, of which the models took 56 s and the person 4 s: fast.
    quick = _participant(1, [(2 / 60, 56 / 60, 2 / 60)] * 3, finished=False)
    assert [round(s, 6) for s in own_seconds(quick)] == [4.0, 4.0, 4.0]
    assert "fast" in signals(quick, Quality(min_seconds_per_turn=10))
    # Twelve seconds a turn, none of it the models': not fast at a ten-second threshold.
    slow = _participant(2, [(6 / 60, 0.0, 6 / 60)] * 3, finished=False)
    assert [round(s, 6) for s in own_seconds(slow)] == [12.0, 12.0, 12.0]
    assert "fast" not in signals(slow, Quality(min_seconds_per_turn=10))
