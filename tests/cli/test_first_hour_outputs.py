"""The first hour's remaining defects (issue 43), each reproduced from the README and the docs
and driven through the CLI: an `--out` that cannot be written is refused before any work, in
one line naming the path given; a rating column that could hold two scales is refused; a
survey's words are mapped to numbers; who the other side is can be said; an unclosed quote
names the line it opens on; a folder given as a file says so.

An unwritable folder is one that refuses a new file even to root: a folder without write
permission for other users, else /sys (a kernel file system that takes no new file)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import SAMPLE, attunebench, csv_import, one_clear_line, run_args

from attunebench.data.jsonl import atomic_writer

ROWS = "conv,who,text,thumb\nc1,me,hi,\nc1,bot,hello,1\nc1,me,bye,\nc1,bot,ciao,0\n"


@pytest.fixture
def unwritable(tmp_path: Path) -> Path:
    """A folder in which no file can be made by this process."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    folder = Path("/sys")
    try:
        (folder / "attunebench-probe").touch()
    except OSError:
        return folder
    pytest.skip("no folder refuses root a new file here")


def _csv(tmp_path: Path, text: str = ROWS, name: str = "chats.csv") -> Path:
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    return source


@pytest.fixture
def rundir(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    made = attunebench(*run_args(tmp_path, out), "--model", "mock/default", "--task", "emotion")
    assert made.exit_code == 0, made.output
    return out


# Outputs that cannot be written --------------------------------------------------------------


def test_every_out_is_checked_writable_before_any_work(
    tmp_path: Path, unwritable: Path, rundir: Path
) -> None:
    chats = _csv(tmp_path)
    columns = ["--conversation-col", "conv", "--speaker-col", "who", "--text-col", "text"]
    commands: dict[str, list[object]] = {
        "report": ["report", rundir, "--out"],
        "export lm-eval": ["export", "lm-eval", SAMPLE, "--out"],
        "suite data": ["suite", "data", "open-v1-mini", "--out"],
        "data split": ["data", "split", SAMPLE, "--out"],
        "data export": ["data", "export", SAMPLE, "--to", "parquet", "--out"],
        "data convert": ["data", "convert", SAMPLE, "--out"],
        "import": ["data", "import", "csv", chats, *columns, "-o"],
        "run": ["run", "--data", SAMPLE, "--model", "mock/default", "--no-cache", "--out"],
    }
    if importlib.util.find_spec("sqlalchemy") is not None:  # the collect extra
        commands["collect export"] = ["collect", "export", "--db", "sqlite:///x.db", "--out"]
    for name, args in commands.items():
        asked = unwritable / "mine" / "out.jsonl"
        message = one_clear_line(attunebench(*args, asked), str(asked))
        assert f"{unwritable} cannot be written" in message and ".part" not in message, name
        assert "Traceback" not in message and "Errno" not in message, name


def test_a_write_error_names_the_file_asked_for(unwritable: Path) -> None:
    """Not the hidden temporary file beside it, nor a folder made on the way."""
    for asked in (unwritable / "o.jsonl", unwritable / "deeper" / "o.jsonl"):
        with pytest.raises(OSError) as refused, atomic_writer(asked) as handle:
            handle.write("never")
        assert refused.value.filename == str(asked)
    assert not list(Path(unwritable).glob(".o.jsonl.*.part"))


def test_a_write_cut_short_is_one_line_naming_the_file(tmp_path: Path, rundir: Path) -> None:
    """A disk that fills up mid-write (a child process whose files may not pass 2 KB): one
    line naming the file being written, no traceback, nothing half-written left."""
    commands = {
        "report": (["report", rundir, "--out", tmp_path / "rep"], tmp_path / "rep/summary.json"),
        "export lm-eval": (
            ["export", "lm-eval", SAMPLE, "--out", tmp_path / "lm"],
            tmp_path / "lm",
        ),
        "data split": (["data", "split", SAMPLE, "--out", tmp_path / "s"], tmp_path / "s.train"),
    }
    for name, (args, named) in commands.items():
        done = subprocess.run(
            [sys.executable, "-c", LIMITED, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode != 0 and len(lines) == 1, (name, done.stderr)
        assert lines[0].startswith(f"error: {named}") and "file too large" in lines[0], name
    assert not list(tmp_path.rglob("*.part"))


LIMITED = """import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
sys.argv = ["attunebench", *sys.argv[1:]]
from attunebench.cli import main
main()
"""


# A rating column of two scales ---------------------------------------------------------------


def test_thumbs_beside_ratings_from_1_are_refused(tmp_path: Path) -> None:
    mixed = ROWS + "c2,me,yo,\nc2,bot,sup,4\nc2,me,ok,\nc2,bot,fine,5\n"
    out = tmp_path / "out.jsonl"
    result = csv_import(_csv(tmp_path, mixed), out, "--rating-col", "thumb")
    message = one_clear_line(result, "thumb holds whole numbers from 0 to 5")
    for shown in ("0 on line 5", "1 on line 3", "4 on line 7", "5 on line 9"):
        assert shown in message
    assert "--rating-low and --rating-high" in message and not out.exists()
    said = csv_import(_csv(tmp_path, mixed), out, "--rating-col", "thumb", "--rating-low", "0")
    assert said.exit_code != 0  # both bounds, or neither
    declared = ["--rating-col", "thumb", "--rating-low", "0", "--rating-high", "5"]
    assert csv_import(_csv(tmp_path, mixed), out, *declared).exit_code == 0


def test_one_scale_not_from_0_is_still_taken_from_the_data(tmp_path: Path) -> None:
    rated = ROWS.replace(",1\n", ",2\n").replace(",0\n", ",5\n")
    result = csv_import(_csv(tmp_path, rated), tmp_path / "o.jsonl", "--rating-col", "thumb")
    assert result.exit_code == 0, result.output
    assert "rating scale taken from the data: thumb 2:5" in result.output
    thumbs = csv_import(_csv(tmp_path), tmp_path / "t.jsonl", "--rating-col", "thumb")
    assert thumbs.exit_code == 0 and "thumb 0:1" in thumbs.output
    # an outcome column holds no thumbs: 0 to 10 there is one scale, as the data shows
    scored = "conv,who,text,rec\nc1,me,hi,0\nc1,bot,yo,\nc2,me,hi,10\nc2,bot,yo,\nc3,me,hi,1\n"
    survey = ["--outcome-col", "recommend=rec"]
    done = csv_import(_csv(tmp_path, scored), tmp_path / "s.jsonl", *survey)
    assert done.exit_code == 0, done.output
    assert "outcome recommend scale taken from the data: rec 0:10" in done.output


# A survey's words, and who the other side is -------------------------------------------------


SURVEY = (
    "conv,who,text,sat\nc1,me,hi,Slightly satisfied\nc1,bot,hello,\n"
    "c2,me,yo,very  DISSATISFIED\nc2,bot,hey,\nc3,me,so,\nc3,bot,so,\n"
)
WORDS = {"Very dissatisfied": 1, "Slightly dissatisfied": 2, "Slightly satisfied": 4}


def test_a_surveys_words_are_mapped_to_numbers(tmp_path: Path) -> None:
    words = tmp_path / "satisfaction.json"
    words.write_text(json.dumps({**WORDS, "Very satisfied": 5}))
    out = tmp_path / "survey.jsonl"
    mapped = ["--outcome-col", "satisfaction=sat", "--outcome-map", f"satisfaction={words}"]
    result = csv_import(_csv(tmp_path, SURVEY), out, *mapped, "--partner", "model")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    outcomes = [line.get("outcome") for line in lines]
    assert outcomes[0]["survey"] == {"satisfaction": 4.0}
    assert outcomes[1]["survey"] == {"satisfaction": 1.0}  # any case, any spacing
    assert outcomes[0]["scales"]["satisfaction"] == {"low": 1.0, "high": 5.0}  # the map's
    assert outcomes[2] is None
    assert all(line["context"]["labels"]["partner"] == "model" for line in lines)


def test_a_word_the_map_lacks_is_one_line(tmp_path: Path) -> None:
    words = tmp_path / "satisfaction.json"
    words.write_text(json.dumps({"Very dissatisfied": 1, "Very satisfied": 5}))
    mapped = ["--outcome-col", "satisfaction=sat", "--outcome-map", f"satisfaction={words}"]
    result = csv_import(_csv(tmp_path, SURVEY), tmp_path / "o.jsonl", *mapped)
    one_clear_line(result, "chats.csv:2: sat: 'Slightly satisfied' is not in the outcome map")


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ('["a", "b"]', "an outcome map is one JSON object of words and the numbers"),
        ('{"good": "5"}', "an outcome map is one JSON object of words and the numbers"),
        ("{not json", "not JSON"),
    ],
)
def test_a_map_that_is_not_one_is_one_line(tmp_path: Path, written: str, says: str) -> None:
    words = tmp_path / "words.json"
    words.write_text(written)
    mapped = ["--outcome-col", "satisfaction=sat", "--outcome-map", f"satisfaction={words}"]
    one_clear_line(csv_import(_csv(tmp_path, SURVEY), tmp_path / "o.jsonl", *mapped), says)


def test_partner_beside_a_partner_column_is_refused(tmp_path: Path) -> None:
    rows = "conv,who,text,partner\nc1,me,hi,person\nc1,bot,hello,person\n"
    given = ["--context-col", "partner", "--partner", "model"]
    one_clear_line(csv_import(_csv(tmp_path, rows), tmp_path / "o.jsonl", *given), "not both")
    wrong = csv_import(_csv(tmp_path, rows), tmp_path / "o.jsonl", "--partner", "robot")
    assert wrong.exit_code == 2 and "'person', 'model'" in wrong.output


# Where a file went wrong ----------------------------------------------------------------------


def test_an_unclosed_quote_names_the_line_it_opens_on(tmp_path: Path) -> None:
    rows = ROWS + 'c2,me,"oops,\nc2,bot,hey,1\nc2,me,fine,\nc2,bot,ok,0\nc3,me,yo,\nc3,bot,sup,1\n'
    result = csv_import(_csv(tmp_path, rows, "open_quote.csv"), tmp_path / "o.jsonl")
    message = one_clear_line(result, "open_quote.csv:6: row: a quote opened in this row")
    assert "row too short" not in message


def test_a_quote_closed_rows_later_names_both_lines(tmp_path: Path) -> None:
    rows = ROWS + 'c2,me,"oops\nc2,bot,hey"\nc2,me,fine,\nc2,bot,ok,0\n'
    result = csv_import(_csv(tmp_path, rows), tmp_path / "o.jsonl", "--rating-col", "thumb")
    one_clear_line(result, "chats.csv:7: thumb: missing (row too short)", "from line 6")


def test_a_folder_given_as_the_csv_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "chats.csv"
    folder.mkdir()
    message = one_clear_line(csv_import(folder, tmp_path / "o.jsonl"), "a folder, not a file")
    assert "not found" not in message
