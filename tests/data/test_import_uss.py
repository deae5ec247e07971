"""USS: the counts in uss/SOURCE.md and how satisfaction scores become ratings."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_harness import imported, message_lines, prefixed

from attunebench.data.importers import ImportFormatError, USSImporter


@pytest.mark.parametrize(
    ("part", "lines", "users", "systems", "rounded"),
    [
        ("mwoz", 23_108, 12_553, 10_555, {"1": 8, "2": 791, "3": 10_426, "4": 1_324, "5": 4}),
        ("redial", 22_458, 11_806, 10_652, {"1": 4, "2": 758, "3": 8_696, "4": 2_324, "5": 24}),
    ],
)
def test_counts_match_the_source(
    data_dir: Path,
    tmp_path: Path,
    part: str,
    lines: int,
    users: int,
    systems: int,
    rounded: dict[str, int],
) -> None:
    conversations, result = imported(
        USSImporter(part=part), data_dir / "uss", tmp_path / "uss.jsonl"
    )
    assert len(conversations) == 1000
    assert (result.tally["lines:USER"], result.tally["lines:SYSTEM"]) == (users, systems)
    assert prefixed(result.tally, "rating") == rounded  # round(mean of raters), OVERALL included
    # every line is accounted for: messages, replies, one OVERALL each, and the empty lines left out
    empty = result.dropped().get("lines with empty text", 0)
    assert sum(message_lines(conversations)) + 1000 + empty == lines
    assert all(c.outcome and c.outcome.rating for c in conversations)
    # each reply's rating is the feedback given with the user's next message
    pairs = [
        (turn.responses[0].rating, after.feedback)
        for c in conversations
        for turn, after in zip(c.turns, c.turns[1:], strict=False)
        if turn.responses
    ]
    assert pairs and all(rating == feedback is not None for rating, feedback in pairs)
    assert conversations[0].source.provenance == {"rating": "third-party", "outcome": "third-party"}


def test_a_user_line_rates_the_reply_before_it(tmp_path: Path) -> None:
    folder = tmp_path / "uss"
    folder.mkdir()
    (folder / "MWOZ.txt").write_text(
        "\n"
        "USER\tI need a hotel.\tHotel-Inform\t3,3\n"
        "SYSTEM\tWhich area?\tHotel-Request\t\n"
        "USER\tThe north.\t\t4,5\n"
        "USER\tCheap, please.\t\t1,1\n"
        "SYSTEM\tTry the Acorn.\t\t\n"
        "USER\tOVERALL\t\t2,4\n"
        "\n"
        "USER\tHello.\t\t3,3,3\n"
        "USER\tOVERALL\t\t3,3,3\n",
        encoding="utf-8",
    )
    (first, second), result = imported(USSImporter(part="mwoz"), folder, tmp_path / "out.jsonl")
    assert [t.user for t in first.turns] == ["I need a hotel.", "The north.\nCheap, please."]
    assert [t.responses[0].rating for t in first.turns] == [4.5, None]
    assert first.outcome is not None and first.outcome.rating == 3.0
    assert second.id == "uss-mwoz-0001" and second.turns[0].user == "Hello."
    assert result.dropped() == {"actions": 2, "feedback ratings with no new reply to rate": 3}


def test_bad_satisfaction_is_located(tmp_path: Path) -> None:
    folder = tmp_path / "uss"
    folder.mkdir()
    (folder / "ReDial.txt").write_text("USER\tHi\t\t3,x\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"ReDial\.txt:1: satisfaction: '3,x'"):
        imported(USSImporter(part="redial"), folder, tmp_path / "out.jsonl")
    (folder / "ReDial.txt").write_text("USER\tHi\t\t3,9\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match="outside 1-5"):
        imported(USSImporter(part="redial"), folder, tmp_path / "out.jsonl")
