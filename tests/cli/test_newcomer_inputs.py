"""The unclean inputs a newcomer met bringing two corpora of their own through the README and
the docs (issue 35), each driven through the CLI: one clear line on stderr (two at most), no
traceback, a non-zero exit, and nothing already made lost. What the importer and the tasks now
make of a corpus's own outcome columns and reply ratings is tested in
tests/data/test_import_csv_outcome.py and tests/tasks/test_own_scales.py; the README's tour in
tests/docs/test_readme_tour.py; a server that answers web pages in
tests/models/test_not_an_api.py.
"""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path

import pytest
from cli_harness import ROOT, SAMPLE, attunebench, csv_import, one_clear_line, run_args
from rich.table import Table

from attunebench.cli.consoles import CommandConsole
from testkit.web_page import WebPageServer

ROWS = "conv,who,text,thumb\nc1,me,hi,\nc1,bot,hello,1\nc1,me,bye,\nc1,bot,ciao,0\n"


def _csv(tmp_path: Path, text: str = ROWS, name: str = "chats.csv") -> Path:
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    return source


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def kept(tmp_path: Path) -> Path:
    """An output a failed import must leave as it was."""
    out = tmp_path / "out.jsonl"
    out.write_text("mine\n")
    return out


# Tracebacks --------------------------------------------------------------------------------


def test_an_empty_label_separator(tmp_path: Path, kept: Path) -> None:
    result = csv_import(_csv(tmp_path), kept, "--emotion-col", "thumb", "--label-sep", "")
    one_clear_line(result, "--label-sep is empty")
    assert kept.read_text() == "mine\n"


def test_collect_serve_on_a_port_that_is_no_port() -> None:
    pytest.importorskip("uvicorn")
    result = attunebench("collect", "serve", "--port", 70000, "--db", "sqlite:///absent.db")
    one_clear_line(result, "--port 70000 is not a port", "1 to 65535")


# Silent results -----------------------------------------------------------------------------


def test_a_csv_of_a_header_alone(tmp_path: Path, kept: Path) -> None:
    result = csv_import(_csv(tmp_path, "conv,who,text\n"), kept)
    one_clear_line(result, "chats.csv:1: rows: the header is the only row")
    assert kept.read_text() == "mine\n"


def test_a_column_named_twice_in_the_header(tmp_path: Path, kept: Path) -> None:
    source = _csv(tmp_path, "conv,who,text,text\nc1,me,hi,oops\nc1,bot,hello,oops\n")
    one_clear_line(csv_import(source, kept), "column 'text' appears 2 times", "columns 3, 4")


def test_a_nul_byte_in_a_text(tmp_path: Path, kept: Path) -> None:
    source = _csv(tmp_path, "conv,who,text\nc1,me,hi\nc1,bot,hel\x00lo\n")
    one_clear_line(csv_import(source, kept), "chats.csv:3: text: holds a NUL byte")


def test_one_column_as_both_conversation_and_speaker(tmp_path: Path, kept: Path) -> None:
    columns = ["--conversation-col", "who", "--speaker-col", "who", "--text-col", "text"]
    result = attunebench("data", "import", "csv", _csv(tmp_path), "-o", kept, *columns)
    one_clear_line(result, "--speaker-col 'who' is also a --conversation-col")


def test_a_run_with_nothing_to_plan(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [*run_args(tmp_path, out), "--model", "mock/default", "--task", "judge_thumbs"]
    result = attunebench(*args, "--judge", "proxy/minilm")
    one_clear_line(result, "nothing to run: task judge_thumbs has nothing to score on this data")
    assert not out.exists()


# Unclear messages ---------------------------------------------------------------------------


def test_a_run_directory_of_another_version(tmp_path: Path) -> None:
    out = tmp_path / "run"
    made = attunebench(*run_args(tmp_path, out), "--model", "mock/default", "--task", "emotion")
    assert made.exit_code == 0, made.output
    info = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**info, "format": "attunebench-run/v0"}))
    report = attunebench("report", out, "--out", tmp_path / "report")
    one_clear_line(report, "made by another version of attunebench", "'attunebench-run/v0'")
    assert "Input should be" not in report.stderr


def test_suite_data_into_a_file(tmp_path: Path) -> None:
    taken = tmp_path / "suite"
    taken.write_text("mine")
    one_clear_line(attunebench("suite", "data", "open-v1-mini", "--out", taken), "is a file")
    assert taken.read_text() == "mine"


def test_a_base_url_that_is_no_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "notaurl")
    out = tmp_path / "run"
    result = attunebench(*run_args(tmp_path, out), "--model", "openai/m")
    one_clear_line(result, "OPENAI_BASE_URL 'notaurl' is not a URL", "http://127.0.0.1:8000/v1")
    assert "cannot reach" not in result.stderr and not out.exists()


def test_a_rating_scale_upside_down(tmp_path: Path, kept: Path) -> None:
    scale = ["--rating-col", "thumb", "--rating-low", "5", "--rating-high", "1"]
    result = csv_import(_csv(tmp_path), kept, *scale)
    one_clear_line(result, "--rating-low 5 is not below --rating-high 1")
    assert "chats.csv:" not in result.stderr  # the options are at fault, not the data


def test_json_lines_given_to_the_csv_importer(tmp_path: Path, kept: Path) -> None:
    source = _csv(tmp_path, SAMPLE.read_text(encoding="utf-8"), name="sample.jsonl")
    message = one_clear_line(csv_import(source, kept), "a JSON line, not a CSV header")
    assert "attunebench-sample" not in message  # not the whole first line as "columns"


def test_an_image_given_to_validate(tmp_path: Path) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8)
    result = attunebench("data", "validate", picture)
    assert result.exit_code != 0
    assert "a binary file" in result.output and "1 problem" in result.output


def test_a_models_file_written_as_json(tmp_path: Path) -> None:
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": {"mine": {"spec": "mock/default"}}}))
    args = [*run_args(tmp_path, tmp_path / "run"), "--models-file", models, "--model", "mine"]
    one_clear_line(attunebench(*args), "not valid TOML", "a models file is TOML")


def test_a_models_file_that_is_not_there_is_named_once(tmp_path: Path) -> None:
    args = [*run_args(tmp_path, tmp_path / "run"), "--models-file", "models.toml"]
    message = one_clear_line(attunebench(*args, "--model", "mine"), "no such models file")
    assert message.count("models.toml") == 1


def test_the_run_cache_given_as_the_study_database(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    cache = tmp_path / "cache.sqlite"
    made = attunebench(*run_args(tmp_path, tmp_path / "run"), "--model", "mock/default")
    assert made.exit_code == 0 and cache.is_file(), made.output
    before = cache.read_bytes()
    for command in ("status", "init"):
        args = ["collect", command, "--db", f"sqlite:///{cache}"]
        if command == "init":
            args += ["--study", ROOT / "examples" / "study.toml"]
        result = (
            attunebench(*args, "--no-check-models") if command == "init" else attunebench(*args)
        )
        one_clear_line(result, "holds no study but other tables (responses)")
    assert cache.read_bytes() == before  # no study tables added to the cache


def test_power_between_a_model_and_itself(tmp_path: Path) -> None:
    out = tmp_path / "run"
    made = attunebench(*run_args(tmp_path, out), "--model", "mock/default", "--task", "emotion")
    assert made.exit_code == 0, made.output
    result = attunebench("power", out, "--models", "mock/default", "mock/default")
    one_clear_line(result, "--models names mock/default twice")


def test_a_validators_words_come_without_pydantics_prefix(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    study = (ROOT / "examples" / "study.toml").read_text()
    bad = tmp_path / "study.toml"
    bad.write_text(study.replace("max = 5", "max = 1", 1))
    assert bad.read_text() != study
    args = ["collect", "init", "--study", bad, "--db", f"sqlite:///{tmp_path / 'study.db'}"]
    result = attunebench(*args, "--no-check-models")
    assert result.exit_code != 0
    assert "must be below max" in result.stderr and "Value error" not in result.stderr


# The findings: a CSV's reply ratings, the tour's models file, a server of web pages ----------


def test_reply_ratings_in_a_csv_make_rating_items(tmp_path: Path) -> None:
    out = tmp_path / "chats.jsonl"
    imported = csv_import(
        _csv(tmp_path), out, "--rating-col", "thumb", "--provenance", "rating=first-person"
    )
    assert imported.exit_code == 0, imported.output
    assert "2 reply ratings made rating items" in imported.output
    stats = attunebench("data", "stats", out, "--json")
    assert json.loads(stats.stdout)["gold"]["rating"]["reply_items"] == 2
    run = tmp_path / "run"
    args = ["run", "--data", out, "--out", run, "--task", "rating", "--no-progress", "--no-cache"]
    ran = attunebench(*args, "--model", "mock/default")
    assert ran.exit_code == 0, ran.output
    assert len((run / "records.jsonl").read_text().splitlines()) == 2


def test_a_base_url_serving_web_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with WebPageServer(501) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = attunebench(*run_args(tmp_path, tmp_path / "run"), "--model", "openai/m")
    one_clear_line(result, "is not an OpenAI-compatible server: its /models answered HTML")
    assert server.calls == 1 and not (tmp_path / "run").exists()


# The smaller points ---------------------------------------------------------------------


def test_flags_show_no_type_in_help() -> None:
    for command in (["--help"], ["run", "--help"], ["data", "import", "csv", "--help"]):
        shown = attunebench(*command)
        assert shown.exit_code == 0 and "<bool>" not in shown.output, shown.output
    assert "--no-cache " in attunebench("run", "--help").output


def test_a_table_is_written_in_full_when_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    console = CommandConsole(file=io.StringIO())
    table = Table(*(f"column {i}" for i in range(12)))
    table.add_row(*(f"value number {i}" for i in range(12)))
    console.print(table)
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 5 and "value number 11" in lines[3]  # one line a row, none cut


def test_collect_status_prints_where_serve_listens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uvicorn = pytest.importorskip("uvicorn")
    study = (ROOT / "examples" / "study.toml").read_text()
    opened = tmp_path / "study.toml"
    opened.write_text(study.replace("open = false", "open = true\ncap = 10", 1))
    db = f"sqlite:///{tmp_path / 'study.db'}"
    made = attunebench("collect", "init", "--study", opened, "--db", db, "--no-check-models")
    assert made.exit_code == 0, made.output
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)  # served, and stopped
    port = free_port()
    assert attunebench("collect", "serve", "--db", db, "--port", port).exit_code == 0
    status = attunebench("collect", "status", "--db", db)
    assert f"open link: http://127.0.0.1:{port}/join/" in status.output
    invited = attunebench("collect", "invite", "--db", db)
    assert invited.output.startswith(f"http://127.0.0.1:{port}/p/")
