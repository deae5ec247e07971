"""GoEmotions: the counts in goemotions/SOURCE.md, multi-label state, quoted texts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from import_harness import imported

from attunebench.data.importers import GoEmotionsImporter, ImportFormatError

TEST_TOP = {
    "neutral": 1787,
    "admiration": 504,
    "gratitude": 352,
    "approval": 351,
    "annoyance": 320,
    "curiosity": 284,
    "disapproval": 267,
    "amusement": 264,
}


@pytest.mark.parametrize(
    ("split", "comments", "multi"), [("valid", 5426, 878), ("test", 5427, 837)]
)
def test_counts_match_the_source(
    data_dir: Path, tmp_path: Path, split: str, comments: int, multi: int
) -> None:
    conversations, _ = imported(
        GoEmotionsImporter(split=split), data_dir / "goemotions", tmp_path / "ge.jsonl"
    )
    assert len(conversations) == comments
    states = [c.turns[0].state for c in conversations]
    assert all(len(c.turns) == 1 and not c.turns[0].responses for c in conversations)
    assert sum(1 for s in states if s and len(s.emotions) > 1) == multi
    assert all(s and (s.primary is None) == (len(s.emotions) > 1) for s in states)
    if split == "test":
        counts = Counter(e for s in states if s for e in s.emotions)
        assert dict(counts.most_common(len(TEST_TOP))) == TEST_TOP
    assert len({e for s in states if s for e in s.emotions}) == 28


def test_quoted_text_and_bad_ids(tmp_path: Path) -> None:
    folder = tmp_path / "goemotions"
    folder.mkdir()
    (folder / "emotions.txt").write_text("admiration\namusement\nneutral\n", encoding="utf-8")
    (folder / "dev.tsv").write_text('"She said ""wow"" twice"\t0,1\tabc1\n', encoding="utf-8")
    [conversation], _ = imported(GoEmotionsImporter("valid"), folder, tmp_path / "out.jsonl")
    assert conversation.id == "goemotions-valid-abc1"
    assert conversation.turns[0].user == 'She said "wow" twice'
    assert conversation.turns[0].state and conversation.turns[0].state.emotions == (
        "admiration",
        "amusement",
    )
    (folder / "dev.tsv").write_text("ok\t0\tabc1\nfine\t7\tabc2\n", encoding="utf-8")
    with pytest.raises(
        ImportFormatError, match=r"dev\.tsv:2: labels: '7' is not a comma list of ids 0-2"
    ):
        imported(GoEmotionsImporter("valid"), folder, tmp_path / "out.jsonl")
