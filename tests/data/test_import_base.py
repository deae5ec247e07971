"""The helpers every importer shares: which files a split option reads, the lines of a
record-per-line file, and the field count of a tab-separated line, each with its error."""

from __future__ import annotations

from pathlib import Path

import pytest

from attunebench.data.importers import ImportFormatError, ImportOptionError, Location
from attunebench.data.importers._base import expect_fields, split_files, text_lines

FILES = {"valid": "dev.tsv", "test": "test.tsv"}


def test_split_files_all_in_corpus_order_and_one_by_name(tmp_path: Path) -> None:
    for name in ("test.tsv", "dev.tsv"):
        (tmp_path / name).write_text("", encoding="utf-8")
    assert list(split_files(tmp_path, FILES, "all")) == [
        ("valid", tmp_path / "dev.tsv"),
        ("test", tmp_path / "test.tsv"),
    ]
    assert list(split_files(tmp_path, FILES, "test")) == [("test", tmp_path / "test.tsv")]


def test_split_files_names_the_option_and_a_missing_file_only_when_reached(
    tmp_path: Path,
) -> None:
    with pytest.raises(ImportOptionError, match=r"^part 'train' is not one of: valid, test$"):
        list(split_files(tmp_path, FILES, "train", option="part"))
    (tmp_path / "dev.tsv").write_text("", encoding="utf-8")
    files = split_files(tmp_path, FILES, "all")
    assert next(files) == ("valid", tmp_path / "dev.tsv")  # read before test.tsv is looked for
    with pytest.raises(ImportOptionError, match=r"test\.tsv: file not found"):
        next(files)


def test_text_lines_skip_blank_lines_and_keep_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "lines.txt"
    path.write_text("first\n\n   \nsecond\r\n", encoding="utf-8")
    assert [(where.line, text) for where, text in text_lines(path)] == [
        (1, "first\n"),
        (4, "second\r\n"),
    ]


def test_expect_fields_counts_and_names_where(tmp_path: Path) -> None:
    where = Location(tmp_path / "f.txt", 3)
    assert expect_fields(["a", "b", "c"], 3, where, "row") == ["a", "b", "c"]
    with pytest.raises(ImportFormatError, match=r"f\.txt:3: line: expected 4 tab-separated"):
        expect_fields(["a", "b", "c"], 4, where, "line")
