"""JSON Lines, Parquet and `datasets` round trips, and what happens to bad input on each path."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import Conversation, load_taxonomy, read_conversations, write_conversations
from attunebench.data import parquet as parquet_io
from attunebench.data.parquet import (
    SCHEMA,
    export_hf,
    hf_to_jsonl,
    jsonl_to_parquet,
    parquet_to_jsonl,
)
from attunebench.data.sample import sample_path
from attunebench.data.validate import DatasetError


def with_inline_taxonomy_and_survey() -> Conversation:
    """The parts of the format a nested Arrow schema could not hold: unions and open maps."""
    base = read_conversations(sample_path())[0]
    data = base.model_dump(mode="json")
    data["id"] = "inline-1"
    data["taxonomy"] = load_taxonomy("attunebench-default").model_dump(mode="json")
    data["outcome"] = {"rating": 4, "survey": {"felt_heard": "yes", "helpfulness": 4.5}}
    data["participant"]["traits"]["diagnosis"] = "none given"
    return Conversation.model_validate(data)


def test_jsonl_lines_state_their_format(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    conversations = read_conversations(sample_path())
    assert write_conversations(path, conversations) == len(conversations)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["format"] == "attunebench/v1" for line in lines)
    assert read_conversations(path) == conversations
    assert path.read_bytes() == sample_path().read_bytes()  # the sample is stored canonically


def test_parquet_round_trip_is_lossless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parquet_io, "BATCH_ROWS", 5)  # several row groups from a small file
    conversations = [*read_conversations(sample_path()), with_inline_taxonomy_and_survey()]
    src = tmp_path / "src.jsonl"
    write_conversations(src, conversations)
    assert jsonl_to_parquet(src, tmp_path / "d.parquet") == len(conversations)
    assert pq.ParquetFile(tmp_path / "d.parquet").num_row_groups == 3
    assert parquet_to_jsonl(tmp_path / "d.parquet", tmp_path / "back.jsonl") == len(conversations)
    assert (tmp_path / "back.jsonl").read_bytes() == src.read_bytes()


def test_parquet_flat_columns(tmp_path: Path) -> None:
    conversations = read_conversations(sample_path())
    jsonl_to_parquet(sample_path(), tmp_path / "d.parquet")
    table = pq.read_table(tmp_path / "d.parquet")
    assert table.schema.equals(SCHEMA, check_metadata=False)
    assert table.column("id").to_pylist() == [c.id for c in conversations]
    assert table.column("turns").to_pylist() == [len(c.turns) for c in conversations]
    assert table.column("participant_id").to_pylist() == [
        c.participant.id if c.participant else None for c in conversations
    ]


def test_invalid_jsonl_is_not_exported(tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text(sample_path().read_text(encoding="utf-8") + "{oops\n", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        jsonl_to_parquet(src, tmp_path / "out" / "d.parquet")
    assert caught.value.problems[0].line == 13
    assert list((tmp_path / "out").iterdir()) == []  # no partial or temporary file is left


def test_bad_parquet_rows_are_reported_by_row(tmp_path: Path) -> None:
    good = sample_path().read_text(encoding="utf-8").splitlines()
    records = [good[0], good[1].replace('"turns":[{"index":0', '"turns":[{"index":"x"'), "{oops"]
    pq.write_table(pa.table({"record": records}), tmp_path / "d.parquet")
    with pytest.raises(DatasetError) as caught:
        parquet_to_jsonl(tmp_path / "d.parquet", tmp_path / "d.jsonl")
    located = [(p.file, p.line, p.turn, p.field) for p in caught.value.problems]
    path = str(tmp_path / "d.parquet")
    assert located == [(path, 2, 0, "index"), (path, 3, None, None)]
    assert not (tmp_path / "d.jsonl").exists()


def test_not_our_parquet(tmp_path: Path) -> None:
    pq.write_table(pa.table({"text": ["hello"]}), tmp_path / "other.parquet")
    with pytest.raises(DatasetError, match="no 'record' column"):
        parquet_to_jsonl(tmp_path / "other.parquet", tmp_path / "other.jsonl")
    (tmp_path / "junk.parquet").write_text("not parquet", encoding="utf-8")
    with pytest.raises(DatasetError, match="cannot read as Parquet"):
        parquet_to_jsonl(tmp_path / "junk.parquet", tmp_path / "junk.jsonl")


def test_hf_round_trip(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    conversations = [*read_conversations(sample_path()), with_inline_taxonomy_and_survey()]
    src = tmp_path / "src.jsonl"
    write_conversations(src, conversations)
    assert export_hf(src, tmp_path / "hf") == len(conversations)
    loaded = datasets.load_from_disk(str(tmp_path / "hf"))
    assert loaded.num_rows == len(conversations)
    assert loaded["id"] == [c.id for c in conversations]
    hf_to_jsonl(tmp_path / "hf", tmp_path / "back.jsonl")
    assert (tmp_path / "back.jsonl").read_bytes() == src.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back.jsonl", "hf", "src.jsonl"]
    with pytest.raises(FileExistsError):
        export_hf(src, tmp_path / "hf")


def test_cli_export_and_convert(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "d.parquet"
    result = runner.invoke(
        app, ["data", "export", str(sample_path()), "--to", "parquet", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["data", "convert", str(out), "--out", str(tmp_path / "d.jsonl")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d.jsonl").read_bytes() == sample_path().read_bytes()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    result = runner.invoke(
        app, ["data", "export", str(bad), "--to", "hf", "--out", str(tmp_path / "hf")]
    )
    assert result.exit_code == 1
    assert f"{bad}:1: malformed JSON" in result.output
    assert not (tmp_path / "hf").exists()
