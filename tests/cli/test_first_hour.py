"""The 14 mistakes a new user made in their first hour (issue 24), each driven through the CLI:
a clear line on stderr (at most two), no traceback, and a non-zero exit where it is an error.

Each test plants the mistake as the user made it and checks that the command stops before any
work with a message naming the fix, and, where the mistake used to leave something behind,
that the corrected command then runs.
"""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path
from typing import Any

import pytest
from cli_harness import ROOT, SAMPLE, attunebench, csv_import, one_clear_line, run_args


@pytest.fixture(scope="module")
def rundir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("run")
    out = tmp / "run"
    result = attunebench(*run_args(tmp, out), "--model", "mock/default", "--task", "emotion")
    assert result.exit_code == 0, result.output
    return out


# 1-3: an existing --out of the wrong kind is refused before any work.


def test_report_out_that_is_a_file(rundir: Path, tmp_path: Path) -> None:
    taken = tmp_path / "report.html"
    taken.write_text("mine")
    one_clear_line(attunebench("report", rundir, "--out", taken), f"--out {taken} is a file")
    assert taken.read_text() == "mine"


def test_export_lm_eval_out_that_is_a_file(tmp_path: Path) -> None:
    taken = tmp_path / "tasks"
    taken.write_text("mine")
    one_clear_line(attunebench("export", "lm-eval", SAMPLE, "--out", taken), "is a file")


def test_collect_export_out_that_is_a_folder(tmp_path: Path) -> None:
    result = attunebench("collect", "export", "--out", tmp_path, "--db", "sqlite:///absent.db")
    one_clear_line(result, f"--out {tmp_path} is a folder")


# 4, 8: a mistyped judge is refused at plan time, whether or not the data has judge items, and
# leaves no run folder behind.


def test_judge_typo_on_data_with_judge_items_then_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "run"
    base = [*run_args(tmp_path, out), "--model", "mock/default", "--task", "response"]
    typo = attunebench(*base, "--judge", "proxy/minilmm")
    one_clear_line(typo, "proxy/minilmm", "no local copy")
    assert not out.exists()
    fixed = attunebench(*base, "--judge", "proxy/minilm", "--limit", 1)
    assert fixed.exit_code == 0, fixed.output


def test_judge_typo_on_data_without_judge_items(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [*run_args(tmp_path, out), "--model", "mock/default", "--task", "emotion"]
    one_clear_line(attunebench(*args, "--judge", "proxy/minilmm"), "proxy/minilmm")
    assert not out.exists()


def test_a_plan_that_recorded_nothing_does_not_block_the_corrected_command(
    rundir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    base = run_args(tmp_path, out)
    assert attunebench(*base, "--model", "mock/default", "--task", "emotion").exit_code == 0
    (out / "records.jsonl").write_text("")  # as a plan that failed before any answer leaves it
    other = attunebench(*base, "--model", "mock/other", "--task", "emotion")
    assert other.exit_code == 0, other.output
    # the trap: a folder holding answers of another plan is still refused
    refused = attunebench(*base, "--model", "mock/default", "--task", "emotion")
    one_clear_line(refused, "holds a different run")


# 5: collect without its extra, and where that extra is named.


def test_collect_without_its_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "sqlalchemy" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    result = attunebench("collect", "status", "--db", f"sqlite:///{tmp_path / 'x.db'}")
    one_clear_line(result, "`collect` extra", "pip install 'attunebench[collect]'")


def test_make_demo_and_the_collecting_guide_name_the_extra() -> None:
    makefile = (ROOT / "Makefile").read_text()
    demo = makefile[makefile.index("\ndemo:") :].split("\n\n")[0]
    assert "collect extra" in demo and ".[collect]" in demo
    assert "pip install -e '.[collect]'" in (ROOT / "docs" / "collecting.md").read_text()


# 6, 14: CSV imports that used to corrupt the corpus silently.


def test_unterminated_quote_names_its_line(tmp_path: Path) -> None:
    source = tmp_path / "chats.csv"
    source.write_text('conv,who,text\nc1,me,"I feel\nc1,bot,Why?\nc1,me,Tired\n')
    out = tmp_path / "out.jsonl"
    one_clear_line(csv_import(source, out), "chats.csv:2:", "quote", "never closed")
    assert not out.exists()


def test_rows_repeated_per_annotator_name_the_flag(tmp_path: Path) -> None:
    source = tmp_path / "chats.csv"
    rows = ["conv,n,who,text", "c1,1,client,I drink", *["c1,2,therapist,Yeah."] * 10]
    source.write_text("\n".join([*rows, "c1,3,client,Yes"]) + "\n")
    out = tmp_path / "out.jsonl"
    refused = csv_import(source, out, "--order-col", "n")
    one_clear_line(refused, "chats.csv:4: n: repeats", "--annotator-col", "--keep-duplicate-rows")
    kept = csv_import(source, out, "--order-col", "n", "--keep-duplicate-rows")
    assert kept.exit_code == 0, kept.output
    validated = attunebench("data", "validate", out)
    assert validated.exit_code == 0  # valid, but warned about
    assert "repeats the line 'Yeah.' 10x" in validated.output
    assert "--annotator-col" in validated.output


# 7: sim/oracle and a task it does not answer.


def test_sim_oracle_refuses_an_unknown_task(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(
        '[models.o]\nspec = "sim/oracle"\noptions = { accuracy = { emotionn = 0.6 } }\n'
    )
    result = attunebench(
        *run_args(tmp_path, tmp_path / "run"), "--models-file", models, "--model", "o"
    )
    one_clear_line(result, "models.toml: models.o:", "'emotionn' is not a task")


# 9: a CSV given where JSON Lines is expected.


def test_a_csv_given_to_run_names_the_import_command(tmp_path: Path) -> None:
    data = tmp_path / "mine.csv"
    data.write_text("conv,who,text\n" + "c1,me,hello\n" * 985)
    args = ["run", "--data", data, "--model", "mock/default", "--out", tmp_path / "run"]
    message = one_clear_line(attunebench(*args), "attunebench data import csv")
    assert "problems" not in message


# 10: an options typo inside a models-file entry, worded like a top-level key.


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ('spec = "mock/default"\noptions = { temprature = 0.3 }', "models.m.options.temprature"),
        ('spec = "sim/oracle"\noptions = { sed = 3 }', "option sed: Extra inputs"),
    ],
)
def test_options_typo_in_a_models_file(tmp_path: Path, entry: str, needle: str) -> None:
    models = tmp_path / "models.toml"
    models.write_text(f"[models.m]\n{entry}\n")
    args = [*run_args(tmp_path, tmp_path / "run"), "--models-file", models, "--model", "m"]
    message = one_clear_line(attunebench(*args), f"{models}: models.m", needle)
    assert "http" not in message and "pydantic" not in message


# 11-12: an output file that is a folder; no temporary file is named.


@pytest.mark.parametrize("command", ["import", "export"])
def test_a_folder_given_as_an_output_file(tmp_path: Path, command: str) -> None:
    source = tmp_path / "chats.csv"
    source.write_text("conv,who,text\nc1,me,hi\nc1,bot,hello\n")
    folder = tmp_path / "taken"
    folder.mkdir()
    if command == "import":
        result = csv_import(source, folder)
    else:
        result = attunebench("data", "export", SAMPLE, "--to", "parquet", "--out", folder)
    message = one_clear_line(result, f"{folder} is a folder")
    assert ".part" not in message


# 13: a port in use.


def test_collect_serve_on_a_port_in_use(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'study.db'}"
    study = ROOT / "examples" / "study.toml"
    made = attunebench("collect", "init", "--study", study, "--db", db, "--no-check-models")
    assert made.exit_code == 0, made.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = attunebench("collect", "serve", "--db", db, "--port", port)
    one_clear_line(result, f"port {port} on 127.0.0.1 is in use")


def test_init_does_not_guess_the_port_of_the_open_link(tmp_path: Path) -> None:
    """`collect init` cannot know the port `serve` will use: it prints the link's path."""
    db = f"sqlite:///{tmp_path / 'study.db'}"
    study = tmp_path / "study.toml"
    text = (ROOT / "examples" / "study.toml").read_text()
    study.write_text(text.replace("open = false", "open = true\ncap = 10", 1))
    made = attunebench("collect", "init", "--study", study, "--db", db, "--no-check-models")
    assert made.exit_code == 0, made.output
    assert "open link: /join/" in made.stdout and ":8000" not in made.stdout
