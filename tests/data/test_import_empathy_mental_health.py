"""Empathy-Mental-Health: the counts in empathy_mental_health/SOURCE.md, the mapping, errors."""

from __future__ import annotations

import csv
import shutil
from collections import Counter
from pathlib import Path

import pytest
from import_harness import imported, prefixed
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import Conversation
from attunebench.data.importers import (
    EmpathyMentalHealthImporter,
    ImportFormatError,
    ImportResult,
)
from attunebench.data.importers.empathy_mental_health import FILES
from attunebench.data.taxonomy import load_taxonomy

Imported = tuple[list[Conversation], ImportResult]
# Level 0 / 1 / 2 per mechanism, over all 3,084 rows of each file (SOURCE.md).
LEVELS = {
    "emotional-reactions": {"0": 2037, "1": 895, "2": 152},
    "interpretations": {"0": 1626, "1": 114, "2": 1344},
    "explorations": {"0": 2604, "1": 104, "2": 376},
}


@pytest.fixture(scope="module")
def corpus(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Imported:
    out = tmp_path_factory.mktemp("empathy") / "out.jsonl"
    return imported(EmpathyMentalHealthImporter(), data_dir / "empathy_mental_health", out)


def _rows(folder: Path, name: str) -> list[dict[str, str]]:
    with open(folder / name, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_counts_match_the_source(corpus: Imported, data_dir: Path) -> None:
    conversations, result = corpus
    assert result.tally["rows"] == 3_084
    for mechanism, levels in LEVELS.items():
        assert prefixed(result.tally, mechanism) == levels
    rows = _rows(data_dir / "empathy_mental_health", FILES["emotional-reactions"])
    pairs = {(row["sp_id"], row["rp_id"]) for row in rows}
    assert len(conversations) == len({sp for sp, _ in pairs}) == 2_979
    replies = [r for c in conversations for t in c.turns for r in t.responses]
    # SOURCE.md's 3,084 "pairs" are rows: 61 rows repeat a (post, reply) pair
    assert len(replies) == len(pairs) == 3_023
    assert result.dropped()["repeated rows of a (post, reply) pair, first kept"] == 3_084 - 3_023
    assert result.tally["repeated rows disagreeing on a level"] > 0


def test_every_reply_carries_one_level_per_mechanism(corpus: Imported, data_dir: Path) -> None:
    conversations, _ = corpus
    names = load_taxonomy("empathy-mental-health").behavior_names()
    labels: Counter[str] = Counter()
    for conversation in conversations:
        [turn] = conversation.turns
        assert turn.continued is None and turn.state is None
        for reply in turn.responses:
            assert [b.rsplit("-", 1)[0] for b in reply.behaviors] == list(LEVELS)
            labels.update(reply.behaviors)
    assert set(labels) <= names
    # the levels of the first row of each (post, reply) pair, read from the files themselves
    words = {"0": "none", "1": "weak", "2": "strong"}
    expected: Counter[str] = Counter()
    for mechanism, name in FILES.items():
        first: dict[tuple[str, str], str] = {}
        for row in _rows(data_dir / "empathy_mental_health", name):
            first.setdefault((row["sp_id"], row["rp_id"]), row["level"])
        expected.update(f"{mechanism}-{words[level]}" for level in first.values())
    assert labels == expected
    source = conversations[0].source
    assert source.provenance == {"behaviors": "third-party"}
    assert "NON-COMMERCIAL".lower() in (source.license or "").lower()


def test_a_post_with_several_replies_is_one_conversation(corpus: Imported, data_dir: Path) -> None:
    conversations, _ = corpus
    rows = _rows(data_dir / "empathy_mental_health", FILES["interpretations"])
    replies_of: dict[str, set[str]] = {}
    for row in rows:
        replies_of.setdefault(row["sp_id"], set()).add(row["rp_id"])
    expected = Counter(len(replies) for replies in replies_of.values())
    assert Counter(len(c.turns[0].responses) for c in conversations) == expected
    assert expected[1] < len(conversations)
    several = next(c for c in conversations if len(c.turns[0].responses) == 3)
    assert several.id.startswith("empathy-reddit-")
    assert len({r.id for r in several.turns[0].responses}) == 3


def _copy(data_dir: Path, folder: Path) -> Path:
    shutil.copytree(data_dir / "empathy_mental_health", folder)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def _rewrite(path: Path, change: int, column: str, value: str) -> None:
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    rows[change][rows[0].index(column)] = value
    with open(path, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)


@pytest.mark.parametrize(
    ("file", "row", "column", "value", "message"),
    [
        ("explorations", 5, "level", "3", r"explorations-reddit\.csv:\d+: level: '3' is not 0, 1"),
        ("interpretations", 2, "rp_id", "x", r"interpretations-reddit\.csv:3: sp_id/rp_id: .*'x'"),
        ("emotional-reactions", 4, "response_post", " ", r"reddit\.csv:5: response_post: empty"),
    ],
)
def test_bad_rows_are_located(
    data_dir: Path, tmp_path: Path, file: str, row: int, column: str, value: str, message: str
) -> None:
    folder = _copy(data_dir, tmp_path / "corpus")
    _rewrite(folder / FILES[file], row, column, value)
    with pytest.raises(ImportFormatError, match=message):
        imported(EmpathyMentalHealthImporter(), folder, tmp_path / "out.jsonl")


def test_files_of_different_lengths_are_refused(data_dir: Path, tmp_path: Path) -> None:
    folder = _copy(data_dir, tmp_path / "corpus")
    path = folder / FILES["explorations"]
    path.write_text(
        "".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8"
    )
    with pytest.raises(ImportFormatError, match=r"row: has no counterpart in explorations"):
        imported(EmpathyMentalHealthImporter(), folder, tmp_path / "out.jsonl")


def test_cli_imports_from_the_data_dir(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ATTUNEBENCH_DATA_DIR", str(data_dir))
    out = tmp_path / "empathy.jsonl"
    run = CliRunner().invoke(
        app, ["data", "import", "empathy-mental-health", "--limit", "5", "-o", str(out)]
    )
    assert run.exit_code == 0, run.output
    assert "wrote 5 conversations" in run.output
    assert "not imported:" in run.output and "rationale spans" in run.output
