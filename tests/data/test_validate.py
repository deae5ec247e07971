"""The validator reports each kind of problem at the right line, turn and field."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import read_conversations
from attunebench.data.sample import sample_path
from attunebench.data.validate import (
    DatasetError,
    FileReport,
    Problem,
    load_validated,
    validate_file,
)

Record = dict[str, Any]


def sample_records() -> list[Record]:
    return [json.loads(line) for line in sample_path().read_text(encoding="utf-8").splitlines()]


def write_lines(path: Path, records: Sequence[Record | str | bytes]) -> Path:
    chunks = []
    for record in records:
        if isinstance(record, bytes):
            chunks.append(record)
        elif isinstance(record, str):
            chunks.append(record.encode())
        else:
            chunks.append(json.dumps(record).encode())
    path.write_bytes(b"\n".join(chunks) + b"\n")
    return path


def only(report: FileReport) -> Problem:
    assert report.problem_count == 1, [str(p) for p in report.problems]
    return report.problems[0]


def test_sample_is_valid_and_counted() -> None:
    report = validate_file(sample_path())
    conversations = read_conversations(sample_path())
    assert report.ok, [str(p) for p in report.problems]
    assert report.conversations == len(conversations)
    assert report.turns == sum(len(c.turns) for c in conversations)
    assert report.responses == sum(len(t.responses) for c in conversations for t in c.turns)
    assert "valid attunebench/v1" in report.summary()


def _set(path: tuple[str | int, ...], value: object) -> Callable[[Record], None]:
    def mutate(record: Record) -> None:
        target: Any = record
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return mutate


def _drop(path: tuple[str | int, ...]) -> Callable[[Record], None]:
    def mutate(record: Record) -> None:
        target: Any = record
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]

    return mutate


# (mutation of the first sample record, turn, field, words the message must contain)
CASES: list[tuple[str, Callable[[Record], None], int | None, str | None, str]] = [
    ("wrong type", _set(("turns", 1, "index"), "second"), 1, "index", "valid integer"),
    ("missing field", _drop(("source",)), None, "source", "required field is missing"),
    ("missing nested", _drop(("turns", 0, "user")), 0, "user", "required field is missing"),
    ("unknown field", _set(("turns", 2, "mood"), "x"), 2, "mood", "unknown field"),
    ("unknown top field", _set(("colour",), "x"), None, "colour", "unknown field"),
    ("bad literal", _set(("source", "kind"), "found"), None, "source.kind", "'collected'"),
    ("out of range", _set(("turns", 0, "state", "intensity"), 9), 0, "state.intensity", "5"),
    ("empty text", _set(("turns", 1, "user"), ""), 1, "user", "empty text"),
    (
        "blank text",
        _set(("turns", 1, "responses", 0, "text"), " \t"),
        1,
        "responses[0].text",
        "whitespace",
    ),
    (
        "emotion label",
        _set(("turns", 0, "state", "emotions", 1), "ennui"),
        0,
        "state.emotions[1]",
        "'ennui' is not in taxonomy",
    ),
    (
        "behavior label",
        _set(("turns", 1, "responses", 1, "behaviors", 0), "snark"),
        1,
        "responses[1].behaviors[0]",
        "'snark'",
    ),
    (
        "wanted label",
        _set(("turns", 0, "need"), {"behaviors": ["hugs"]}),
        0,
        "need.behaviors[0]",
        "'hugs'",
    ),
    (
        "context label",
        _set(("context", "emotion"), "ennui"),
        None,
        "context.emotion",
        "not in taxonomy",
    ),
    (
        "unknown taxonomy",
        _set(("taxonomy",), "no-such-taxonomy"),
        None,
        "taxonomy",
        "unknown taxonomy",
    ),
    ("taxonomy type", _set(("taxonomy",), 7), None, "taxonomy", "expected"),
    (
        "primary outside",
        _set(("turns", 0, "state", "primary"), "joy"),
        0,
        "state.primary",
        "not among the state's emotions",
    ),
    (
        "chosen missing",
        _set(("turns", 0, "preference", "chosen"), "z"),
        0,
        "preference.chosen",
        "'z'",
    ),
    ("continued missing", _set(("turns", 1, "continued"), "z"), 1, "continued", "'z'"),
    ("chosen and tie", _set(("turns", 0, "preference", "tie"), True), 0, "preference", "tie"),
    (
        "duplicate response",
        _set(("turns", 0, "responses", 1, "id"), "a"),
        0,
        "responses[1].id",
        "used twice",
    ),
    ("index repeats", _set(("turns", 2, "index"), 1), 2, "index", "repeats index 1"),
    ("index goes back", _set(("turns", 3, "index"), 0), 3, "index", "comes after"),
    (
        "rating off scale",
        _set(("turns", 0, "responses", 0, "rating"), 9),
        0,
        "responses[0].rating",
        "scale",
    ),
    ("feedback off scale", _set(("turns", 1, "feedback"), 0), 1, "feedback", "scale"),
    (
        "provenance key",
        _set(("source", "provenance", "mood"), "first-person"),
        None,
        "source.provenance.mood",
        "unknown labelled field",
    ),
    ("no turns", _set(("turns",), []), None, "turns", "at least one turn"),
    (
        "probe with two answers",
        _set(("probes",), [{"turn": 0, "after": 1, "state": {}, "preference": {"tie": True}}]),
        None,
        "probes[0]",
        "one repeat answer",
    ),
    (
        "probe of a missing turn",
        _set(("probes",), [{"turn": 9, "after": 9, "preference": {"tie": True}}]),
        None,
        "probes[0].turn",
        "turn 9",
    ),
    (
        "probe before its turn",
        _set(("probes",), [{"turn": 2, "after": 1, "preference": {"tie": True}}]),
        None,
        "probes[0].after",
        "before the turn",
    ),
    (
        "probe names another reply",
        _set(("probes",), [{"turn": 1, "after": 2, "preference": {"chosen": "z"}}]),
        None,
        "probes[0].preference.chosen",
        "'z'",
    ),
    (
        "probe label",
        _set(("probes",), [{"turn": 1, "after": 2, "state": {"emotions": ["ennui"]}}]),
        None,
        "probes[0].state.emotions[0]",
        "'ennui' is not in taxonomy",
    ),
    # an outcome number off the scale the outcome task scores it on (declared, else 1-5)
    (
        "outcome rating off 1-5",
        _set(("outcome", "rating"), 7),
        None,
        "outcome.rating",
        "outside 1..5, the scale an undeclared answer is scored on (declare its scale as "
        "outcome.scales.rating)",
    ),
    (
        "outcome survey off its scale",
        _set(("outcome", "survey"), {"points": 9}),
        None,
        "outcome.survey.points",
        "outside 1..5",
    ),
    (
        "outcome off a declared scale",
        _set(("outcome", "scales"), {"rating": {"low": 0, "high": 1}}),
        None,
        "outcome.rating",
        "4 is outside its declared scale 0..1",
    ),
    (
        "outcome scale upside down",
        _set(("outcome", "scales"), {"rating": {"low": 5, "high": 1}}),
        None,
        "outcome.scales.rating",
        "does not run from low to high",
    ),
]


@pytest.mark.parametrize(
    ("name", "mutate", "turn", "field", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_each_problem_is_located(
    tmp_path: Path,
    name: str,
    mutate: Callable[[Record], None],
    turn: int | None,
    field: str | None,
    words: str,
) -> None:
    records = sample_records()
    bad = copy.deepcopy(records[0])
    mutate(bad)
    path = write_lines(tmp_path / "d.jsonl", [records[1], bad, records[2]])
    problem = only(validate_file(path))
    assert (problem.line, problem.conversation_id) == (2, records[0]["id"])
    assert (problem.turn, problem.field) == (turn, field)
    assert words in problem.message


def test_every_problem_in_a_record_is_reported_in_one_pass(tmp_path: Path) -> None:
    bad = sample_records()[0]
    bad["turns"][0]["state"]["intensity"] = "high"  # a schema error...
    bad["turns"][1]["responses"][0]["behaviors"] = ["snark"]  # ...and rule errors elsewhere
    bad["turns"][3]["preference"] = {"chosen": "z"}
    report = validate_file(write_lines(tmp_path / "d.jsonl", [bad]))
    assert {(p.turn, p.field) for p in report.problems} == {
        (0, "state.intensity"),
        (1, "responses[0].behaviors[0]"),
        (3, "preference.chosen"),
    }


def _located(report: FileReport) -> set[tuple[int | None, str | None]]:
    return {(p.turn, p.field) for p in report.problems}


def test_a_schema_error_hides_no_rule_broken_in_the_same_part(tmp_path: Path) -> None:
    bad = sample_records()[0]
    state = bad["turns"][0]["state"]
    state["intensity"], state["primary"] = 9, "joy"  # out of range; not among the emotions
    del bad["turns"][1]["responses"][0]["text"]  # a reply without text...
    bad["turns"][1]["preference"]["chosen"] = "z"  # ...in a turn whose pick names no reply
    bad["turns"][2]["responses"][1]["tone"] = "warm"  # an unknown field beside a bad label
    bad["turns"][2]["responses"][1]["behaviors"] = ["snark"]
    del bad["turns"][3]["user"]
    bad["turns"][3]["need"] = {"behaviors": ["hugs"]}
    bad["outcome"]["final_state"]["primary"] = "anger"
    bad["colour"] = "blue"
    report = validate_file(write_lines(tmp_path / "d.jsonl", [bad]))
    assert _located(report) == {
        (0, "state.intensity"),
        (0, "state.primary"),
        (1, "responses[0].text"),
        (1, "preference.chosen"),
        (2, "responses[1].tone"),
        (2, "responses[1].behaviors[0]"),
        (3, "user"),
        (3, "need.behaviors[0]"),
        (None, "outcome.final_state.primary"),
        (None, "colour"),
    }
    assert report.problem_count == len(report.problems) == 10
    primary = next(p for p in report.problems if p.field == "state.primary")
    assert str(primary).startswith(f"{tmp_path / 'd.jsonl'}:1: conversation sample-001, turn 0,")


def test_stand_ins_for_invalid_values_raise_no_findings_of_their_own(tmp_path: Path) -> None:
    bad = sample_records()[0]
    first, second = bad["turns"][0]["responses"]
    first["id"] = 7  # a number: the pick naming "7" still finds it
    bad["turns"][0]["preference"]["chosen"] = bad["turns"][0]["continued"] = "7"
    del second["id"]  # two unusable ids are not "the same id twice"
    del bad["turns"][1]["responses"][0]["id"]
    del bad["turns"][1]["responses"][1]["id"]
    bad["turns"][2]["user"] = ""  # empty: the schema says so, the blank-text rule does not
    bad["turns"][3] = "a turn"  # not an object at all
    report = validate_file(write_lines(tmp_path / "d.jsonl", [bad]))
    assert _located(report) == {
        (0, "responses[0].id"),
        (0, "responses[1].id"),
        (1, "responses[0].id"),
        (1, "responses[1].id"),
        (1, "preference.chosen"),  # turn 1 chose "b", whose id is gone
        (1, "continued"),
        (2, "user"),
        (3, None),
    }


def test_duplicate_id_names_the_first_line(tmp_path: Path) -> None:
    a, b = sample_records()[:2]
    path = write_lines(tmp_path / "d.jsonl", [a, b, a])
    problem = only(validate_file(path))
    assert (problem.line, problem.field) == (3, "id")
    assert "first seen on line 1" in problem.message


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("{not json", "malformed JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"id": NaN}', "NaN is not valid JSON"),
        ("[" * 100_000, "malformed JSON"),
    ],
)
def test_undecodable_lines(tmp_path: Path, raw: str, words: str) -> None:
    path = write_lines(tmp_path / "d.jsonl", [sample_records()[0], raw])
    problem = only(validate_file(path))
    assert (problem.line, problem.conversation_id, problem.turn) == (2, None, None)
    assert words in problem.message


def test_truncated_last_line(tmp_path: Path) -> None:
    full = json.dumps(sample_records()[0])
    path = tmp_path / "d.jsonl"
    path.write_text(full + "\n" + full[: len(full) // 2], encoding="utf-8")
    problem = only(validate_file(path))
    assert problem.line == 2
    assert problem.message.startswith("truncated last line")


def test_json_error_wording(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"user": "cut short', encoding="utf-8")
    message = only(validate_file(path)).message
    assert message == (
        "truncated last line (no final newline; "
        "malformed JSON: Unterminated string starting at column 10)"
    )


def test_last_line_without_newline_is_fine_when_complete(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(sample_records()[0]), encoding="utf-8")
    assert validate_file(path).ok


def test_wrong_encoding_gives_the_byte_offset(tmp_path: Path) -> None:
    first = json.dumps(sample_records()[0]).encode()
    second = b'{"id": "caf\xe9"}'
    path = tmp_path / "d.jsonl"
    path.write_bytes(first + b"\n" + second + b"\n")
    problem = only(validate_file(path))
    offset = len(first) + 1 + second.index(b"\xe9")
    assert problem.line == 2
    assert f"byte 0xe9 at byte offset {offset}" in problem.message


def test_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(sample_records()[0]).encode() + b"\n")
    assert "byte-order mark" in only(validate_file(path)).message


def test_over_long_line_is_skipped_unparsed(tmp_path: Path) -> None:
    records = sample_records()
    huge = "[" + "1," * 200_000 + "1]"  # would parse, if it were read
    path = write_lines(tmp_path / "d.jsonl", [records[0], huge, records[1]])
    report = validate_file(path, max_line_bytes=10_000)
    problem = only(report)
    assert problem.line == 2
    assert f"{len(huge) + 1} bytes, over the limit of 10000" in problem.message
    assert report.conversations == 2  # the lines after it are still read, at their own numbers


def test_blank_lines_are_ignored_but_an_empty_file_is_not(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", [sample_records()[0], "", "  "])
    assert validate_file(path).ok
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    assert "no conversations" in only(validate_file(empty)).message


def test_unreadable_file(tmp_path: Path) -> None:
    problem = only(validate_file(tmp_path / "missing.jsonl"))
    assert problem.line is None
    assert "cannot read file" in problem.message


def test_problems_beyond_keep_are_counted(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "d.jsonl", ["{bad"] * 30)
    report = validate_file(path, keep=5)
    assert (len(report.problems), report.problem_count) == (5, 30)


def test_problem_format() -> None:
    full = Problem("d.jsonl", 4, "unknown field", "c-1", 2, "responses[0].x")
    assert str(full) == "d.jsonl:4: conversation c-1, turn 2, responses[0].x: unknown field"
    assert str(Problem("d.jsonl", 7, "malformed JSON")) == "d.jsonl:7: malformed JSON"
    assert str(Problem("d.jsonl", None, "cannot read file")) == "d.jsonl: cannot read file"


def test_load_validated(tmp_path: Path) -> None:
    assert load_validated(sample_path()) == read_conversations(sample_path())
    records = sample_records()
    records[1]["turns"][0]["user"] = ""
    with pytest.raises(DatasetError) as caught:
        load_validated(write_lines(tmp_path / "d.jsonl", records))
    assert caught.value.count == 1
    assert caught.value.problems[0].line == 2
    assert "empty text" in str(caught.value)


LINE = re.compile(r"^[^:]+:\d+: (conversation [^,]+, )?(turn \d+, )?([^:]+: )?.+$")


def test_cli_valid_file_prints_one_line() -> None:
    result = CliRunner().invoke(app, ["data", "validate", str(sample_path())])
    assert result.exit_code == 0
    assert result.output.strip().splitlines() == [validate_file(sample_path()).summary()]


def test_cli_invalid_file_prints_problems_and_fails(tmp_path: Path) -> None:
    records = sample_records()
    records[0]["turns"][1]["responses"][0]["behaviors"] = ["x", "y", "z"]
    path = write_lines(tmp_path / "d.jsonl", [*records, "{oops", records[0]])
    result = CliRunner().invoke(app, ["data", "validate", str(path), "--show", "2"])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert all(LINE.match(line) for line in lines[:2]), lines
    assert f"{path}:1: conversation sample-001, turn 1, responses[0].behaviors[0]:" in lines[0]
    report = validate_file(path)
    # three bad labels, the malformed line, then the copy: a duplicate id and the same three labels
    assert report.problem_count == 8
    assert lines[2] == "... and 6 more problems"
    assert lines[3] == report.summary()
    assert report.conversations == 11
    assert "Traceback" not in result.output
