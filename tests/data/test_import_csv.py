"""The generic CSV importer: mapping of a small corpus, and errors that name file, line, column."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from import_harness import imported
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import read_conversations
from attunebench.data.importers import CsvImporter, ImportFormatError, ImportOptionError

HEADER = ["conv", "spk", "text", "emo", "beh", "score", "pos"]
ROWS = [
    ["c1", "ana", "I feel awful today", "sad", "", "", "1"],
    ["c1", "bot", "What happened?", "", "question", "", "3"],
    ["c1", "bot", "I'm sorry to hear that.", "", "reflection of feelings", "", "2"],
    ["c1", "ana", "My cat died", "grief", "", "4", "4"],
    ["c1", "bot", "You should have seen a vet.", "", "lecturing", "1", "5"],
    ["c2", "sam", "Hello", "", "", "", "1"],
    ["c2", "kim", "Hi Sam", "", "", "", "2"],
    ["c2", "lee", "Hey", "", "", "", "3"],
]
OPTIONS = [
    "--conversation-col",
    "conv",
    "--speaker-col",
    "spk",
    "--text-col",
    "text",
    "--emotion-col",
    "emo",
    "--behavior-col",
    "beh",
    "--rating-col",
    "score",
    "--order-col",
    "pos",
    "--rating-low",
    "1",
    "--rating-high",
    "5",
    "--provenance",
    "first-person",
    "--name",
    "study",
    "--license",
    "CC-BY-4.0",
]


def _write(path: Path, rows: list[list[str]], header: list[str] = HEADER) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([header, *rows])
    return path


def _importer(**changes: object) -> CsvImporter:
    options: dict[str, object] = {
        "conversation_col": ["conv"],
        "speaker_col": "spk",
        "text_col": "text",
        "emotion_col": "emo",
        "behavior_col": "beh",
        "rating_col": "score",
        "order_col": "pos",
        "rating_low": 1,
        "rating_high": 5,
        "provenance": "first-person",
        "name": "study",
    }
    return CsvImporter(**{**options, **changes})  # type: ignore[arg-type]


def test_cli_imports_a_small_corpus(tmp_path: Path) -> None:
    source, out = _write(tmp_path / "chats.csv", ROWS), tmp_path / "chats.jsonl"
    run = CliRunner().invoke(app, ["data", "import", "csv", str(source), "-o", str(out), *OPTIONS])
    assert run.exit_code == 0, run.output
    assert "wrote 2 conversations" in run.output
    check = CliRunner().invoke(app, ["data", "validate", str(out)])
    assert check.exit_code == 0, check.output
    first, second = read_conversations(out)
    assert (first.id, second.id) == ("study-c1", "study-c2")
    assert first.source.license == "CC-BY-4.0"
    assert first.source.provenance == {
        "state": "first-person",
        "behaviors": "first-person",
        "rating": "first-person",
    }
    one, two = first.turns
    assert one.user == "I feel awful today" and one.state and one.state.primary == "sadness"
    reply = one.responses[0]
    assert reply.text == "I'm sorry to hear that.\nWhat happened?"  # sorted by `pos`
    assert reply.behaviors == ("reflection", "question")  # synonyms mapped, union kept
    assert reply.rating == 4  # the user's next row rates the replies since their last rating
    assert two.state and two.state.emotions == ("sadness",)
    assert two.responses[0].behaviors == ("lecturing",) and two.responses[0].rating == 1
    # two other speakers: their words only, never their names (a model would read them as said)
    assert second.turns[0].responses[0].text == "Hi Sam\nHey"


def test_user_speaker_option_and_missing_user(tmp_path: Path) -> None:
    source = _write(tmp_path / "chats.csv", ROWS)
    conversations, result = imported(_importer(user_speaker="kim"), source, tmp_path / "out.jsonl")
    [conversation] = conversations
    assert conversation.context.opening == "Hello"
    assert conversation.turns[0].user == "Hi Sam"
    assert result.dropped() == {"conversations without kim": 1}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([["c1", "ana"]], r"chats\.csv:2: text: missing \(row too short\)"),
        (
            [["c1", "ana", "Hi", "blorp", "", "", "1"]],
            r"chats\.csv:2: emo: 1 label is not in taxonomy 'attunebench-default': emo 'blorp' ",
        ),
        ([["c1", "ana", "  ", "", "", "", "1"]], r"chats\.csv:2: text: empty text"),
        (
            [["c1", "ana", "Hi", "", "", "9", "1"]],
            r"chats\.csv:2: score: 9 is outside the scale 1-5",
        ),
        ([["c1", "ana", "Hi", "", "", "", "first"]], r"chats\.csv:2: pos: 'first' is not a number"),
        (
            [*ROWS, ["c1", "ana", "Again", "", "", "", "9"]],
            r"chats\.csv:10: conv: conversation 'c1' continues after other conversations",
        ),
    ],
)
def test_bad_rows_are_located(tmp_path: Path, rows: list[list[str]], message: str) -> None:
    source = _write(tmp_path / "chats.csv", rows)
    with pytest.raises(ImportFormatError, match=message):
        imported(_importer(), source, tmp_path / "out.jsonl")


def test_bad_options_are_refused(tmp_path: Path) -> None:
    source = _write(tmp_path / "chats.csv", ROWS)
    with pytest.raises(ImportOptionError, match=r"chats\.csv:1: no column 'mood'"):
        imported(_importer(emotion_col="mood"), source, tmp_path / "out.jsonl")
    with pytest.raises(ImportOptionError, match="give both --rating-low and --rating-high"):
        imported(_importer(rating_high=None), source, tmp_path / "out.jsonl")


def test_cli_errors_are_one_line_and_keep_the_old_output(tmp_path: Path) -> None:
    source = _write(tmp_path / "chats.csv", [*ROWS, ["c3", "ana"]])
    out = tmp_path / "chats.jsonl"
    out.write_text("old\n", encoding="utf-8")
    run = CliRunner().invoke(app, ["data", "import", "csv", str(source), "-o", str(out), *OPTIONS])
    assert run.exit_code == 1
    assert f"error: {source}:10: text: missing (row too short)" in run.output
    assert "Traceback" not in run.output
    assert out.read_text(encoding="utf-8") == "old\n"
    unknown = CliRunner().invoke(
        app, ["data", "import", "csv", str(source), "-o", str(out), *OPTIONS, "--taxonomy", "nope"]
    )
    assert unknown.exit_code == 1 and "unknown taxonomy 'nope'" in unknown.output


def test_a_bare_string_for_the_conversation_columns_is_refused_by_name() -> None:
    """`conversation_col` is a list (the flag repeats for a composite key): a bare string would
    be read as one column per letter, so it is refused with the list it should have been."""
    with pytest.raises(TypeError, match=r"conversation_col is a list of columns: \['dialog_id'\]"):
        CsvImporter(conversation_col="dialog_id", speaker_col="s", text_col="t")  # type: ignore[arg-type]
