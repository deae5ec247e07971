"""Mistakes beyond issue 24's fourteen, tried as a new user following the README and the docs,
each driven through the CLI: one clear line on stderr (two at most), no traceback, exit != 0."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from cli_harness import SAMPLE, attunebench, csv_import, one_clear_line

RUN = ["run", "--data", str(SAMPLE), "--model", "mock/default"]


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("mine")
    return path


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["demo", "--out", "{file}"], "is a file"),
        (["report", "{tmp}", "--out", "{file}/report"], "is a file, not a folder"),
        (
            [*RUN, "--out", "{tmp}/run", "--cache", "{file}/cache.sqlite"],
            "--cache",
        ),
        ([*RUN, "--out", "{file}/run"], "is a file, not a folder"),
        (
            ["run", "--data", str(SAMPLE), "--model", "hf/{tmp}/no-model", "--out", "{tmp}/run"],
            "no checkpoint in that folder",
        ),
    ],
)
def test_paths_that_cannot_be(args: list[str], needle: str, a_file: Path, tmp_path: Path) -> None:
    filled = [arg.format(file=a_file, tmp=tmp_path) for arg in args]
    message = one_clear_line(attunebench(*filled), needle)
    assert "http" not in message


def test_a_tab_separated_file_without_its_delimiter(tmp_path: Path) -> None:
    source = tmp_path / "chats.tsv"
    source.write_text("conv\twho\ttext\nc1\tme\thi\nc1\tbot\thello\n")
    out = tmp_path / "out.jsonl"
    one_clear_line(csv_import(source, out), "--delimiter $'\\t'")
    assert csv_import(source, out, "--delimiter", "\\t").exit_code == 0  # as typed in a shell
    one_clear_line(csv_import(source, out, "--delimiter", ";;"), "not one character")


@pytest.mark.parametrize(
    ("start", "needle"),
    [(b"PK\x03\x04rest", "spreadsheet"), (gzip.compress(b"conv,who,text\n"), "gunzip")],
)
def test_a_binary_file_given_as_csv(tmp_path: Path, start: bytes, needle: str) -> None:
    source = tmp_path / "chats.csv"
    source.write_bytes(start)
    one_clear_line(csv_import(source, tmp_path / "out.jsonl"), needle)


def test_a_gzipped_dataset_given_to_run(tmp_path: Path) -> None:
    data = tmp_path / "sample.jsonl.gz"
    data.write_bytes(gzip.compress(SAMPLE.read_bytes()))
    args = ["run", "--data", data, "--model", "mock/default", "--out", tmp_path / "run"]
    one_clear_line(attunebench(*args), "decompress it first")


def test_a_latin1_csv_names_the_line_of_its_first_bad_byte(tmp_path: Path) -> None:
    source = tmp_path / "chats.csv"
    source.write_bytes("conv,who,text\nc1,me,hi\nc1,bot,café\n".encode("latin-1"))
    one_clear_line(csv_import(source, tmp_path / "out.jsonl"), "chats.csv:3: encoding", "UTF-8")


def test_meld_user_speaker_matching_nobody(data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "meld.jsonl"
    args = ["data", "import", "meld", data_dir / "meld", "--split", "valid", "--out", out]
    one_clear_line(attunebench(*args, "--user-speaker", "Nobody"), "speaks in no dialogue", "Ross")
    assert not out.exists()
