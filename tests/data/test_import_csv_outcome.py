"""A CSV's outcome columns and per-reply ratings, as a human-bot chat corpus gives them: a 1-5
score of the whole dialogue beside 0-1 thumbs on the bot's messages."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import read_conversations
from attunebench.data.validate import validate_file

HEADER = ["dialog", "who", "text", "thumb", "score", "points", "mood", "said"]
# Two people's chats with a bot: the dialogue score is on one row (or repeated alike), the
# thumbs on the bot's rows; points (10-21) and mood (-3..3) are other answers after the chat.
ROWS = [
    ["d1", "human", "hi there", "", "4", "", "", ""],
    ["d1", "bot", "hello! how are you?", "1", "", "", "", ""],
    ["d1", "human", "not great honestly", "", "", "14", "-2", "meh"],
    ["d1", "bot", "that is a pity", "0", "", "", "", ""],
    ["d1", "human", "yeah", "", "4", "", "", ""],
    ["d2", "human", "tell me a joke", "", "", "21", "3", "fun"],
    ["d2", "bot", "why did the chicken cross the road", "1", "", "", "", ""],
    ["d2", "human", "no idea", "", "2", "", "", ""],
    ["d2", "bot", "to get to the other side", "0", "", "", "", ""],
    ["d3", "human", "hello", "", "5", "10", "0", "ok"],
    ["d3", "bot", "hi", "1", "", "", "", ""],
]
COLUMNS = ["--conversation-col", "dialog", "--speaker-col", "who", "--text-col", "text"]
DONE_WHEN = [
    "--outcome-col",
    "rating=score",
    "--outcome-scale",
    "rating=1:5",
    "--rating-col",
    "thumb",
]


def _csv(path: Path, rows: list[list[str]] = ROWS) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([HEADER, *rows])
    return path


def _import(tmp_path: Path, *options: str, rows: list[list[str]] = ROWS) -> tuple[int, str, Path]:
    out = tmp_path / "chats.jsonl"
    source = _csv(tmp_path / "chats.csv", rows)
    result = CliRunner().invoke(
        app, ["data", "import", "csv", str(source), "-o", str(out), *COLUMNS, *options]
    )
    return result.exit_code, result.output, out


def test_a_dialogue_score_beside_reply_thumbs_scores_each_on_its_own_scale(tmp_path: Path) -> None:
    code, said, data = _import(tmp_path, *DONE_WHEN)
    assert code == 0, said
    assert "note: 5 reply ratings made rating items" in said
    assert "note: 1 rating scale taken from the data: thumb 0:1" in said
    assert validate_file(data).ok
    run = tmp_path / "run"
    models = ["--model", "baseline/random", "--model", "sim/oracle", "--model", "mock/default"]
    args = ["run", "--data", str(data), "--out", str(run), "--task", "outcome", "--task", "rating"]
    result = CliRunner().invoke(app, [*args, *models, "--no-progress", "--no-cache"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    outcome = [r for r in records if r["task"] == "outcome"]
    rating = [r for r in records if r["task"] == "rating"]
    assert len(outcome) == 3 * 3 and len(rating) == 5 * 3
    assert {tuple(r["gold"]["scales"]["rating"]) for r in outcome} == {(1.0, 5.0)}
    assert sorted(r["gold"]["values"]["rating"] for r in outcome if r["model"] == "sim/oracle") == [
        2.0,
        4.0,
        5.0,
    ]
    for record in outcome + rating:  # 1 - error as a share of the scale: never below 0
        assert 0.0 <= record["score"] <= 1.0, record
    assert {tuple(r["gold"]["scale"]) for r in rating} == {(0.0, 1.0)}
    thumbs = sorted(r["gold"]["rating"] for r in rating if r["model"] == "sim/oracle")
    assert thumbs == [0.0, 0.0, 1.0, 1.0, 1.0]


def test_outcome_fields_take_their_scale_from_the_option_or_the_data(tmp_path: Path) -> None:
    options = [*DONE_WHEN, "--outcome-col", "points=points", "--outcome-col", "mood=mood"]
    options += ["--outcome-scale", "mood=-3:3", "--outcome-col", "said=said"]
    code, said, data = _import(tmp_path, *options)
    assert code == 0, said
    assert (
        "outcome points scale taken from the data: points 10:21 (to set it: --outcome-scale" in said
    )
    assert "mood" not in said  # its scale was given
    first = read_conversations(data)[0].outcome
    assert first is not None
    assert first.survey == {"points": 14.0, "mood": -2.0, "said": "meh"}  # words stay words
    assert {k: (v.low, v.high) for k, v in first.scales.items()} == {
        "rating": (1.0, 5.0),
        "points": (10.0, 21.0),
        "mood": (-3.0, 3.0),
    }


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (["--outcome-col", "rating"], "give FIELD=VALUE"),
        (["--outcome-col", "my field=score"], "must be a name"),
        (["--outcome-col", "rating=score", "--outcome-scale", "rating=5:1"], "5 is not below 1"),
        (["--outcome-col", "rating=score", "--outcome-scale", "rating=1-5"], "LOW:HIGH"),
        (
            ["--outcome-col", "rating=score", "--outcome-scale", "points=1:5"],
            "no --outcome-col points",
        ),
        (
            ["--outcome-col", "rating=score", "--outcome-scale", "rating=1:3"],
            "chats.csv:2: score: 4 is outside the scale 1:3",
        ),
        (["--outcome-col", "rating=said"], "chats.csv:4: said: 'meh' is not a number"),
        (["--outcome-col", "rating=nope"], "no column 'nope'"),
    ],
)
def test_bad_outcome_options_are_one_line(tmp_path: Path, options: list[str], needle: str) -> None:
    code, said, data = _import(tmp_path, *options)
    assert code != 0 and needle in said, said
    assert not data.exists()


def test_two_values_of_one_conversation_are_refused_with_both_lines(tmp_path: Path) -> None:
    rows = [list(row) for row in ROWS]
    rows[4][4] = "3"  # d1's second row giving a score says 3, its first 4
    code, said, _ = _import(tmp_path, "--outcome-col", "rating=score", rows=rows)
    assert code != 0
    assert "chats.csv:6: score: '3' differs from '4' on line 2" in said


def test_a_column_of_one_value_has_no_range_to_take(tmp_path: Path) -> None:
    rows = [[*row[:4], "4" if row[4] else "", *row[5:]] for row in ROWS]
    code, said, _ = _import(tmp_path, "--outcome-col", "rating=score", rows=rows)
    assert code != 0 and "every number is 4" in said and "--outcome-scale rating=LOW:HIGH" in said
