"""Topical-Chat: the counts in topical_chat/SOURCE.md, and whose label lands where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from import_harness import imported, prefixed

from attunebench.data.importers import ImportFormatError, TopicalChatImporter


def test_counts_match_the_source(data_dir: Path, tmp_path: Path) -> None:
    conversations, result = imported(
        TopicalChatImporter(), data_dir / "topical_chat", tmp_path / "tc.jsonl"
    )
    t = result.tally
    assert (t["conversations"], t["turns"]) == (2156, 46_903)
    assert prefixed(t, "config") == {"A": 475, "B": 481, "C": 492, "D": 708}
    assert prefixed(t, "sentiment") == {
        "Curious to dive deeper": 20_274,
        "Neutral": 10_429,
        "Surprised": 7615,
        "Happy": 7228,
        "Sad": 537,
        "Disgusted": 415,
        "Angry": 257,
        "Fearful": 148,
    }
    assert prefixed(t, "turn_rating") == {
        "Excellent": 22_862,
        "Good": 20_273,
        "Passable": 2781,
        "Not Good": 391,
        "Poor": 141,
        "blank": 455,
    }
    assert prefixed(t, "conversation_rating") == {
        "Excellent": 2396,
        "Good": 1681,
        "Passable": 207,
        "Not Good": 22,
        "blank": 6,
    }
    # read from both sides, every writer's label is one user turn's state, exactly once
    assert len(conversations) == 2 * 2156
    states = [turn.state for c in conversations for turn in c.turns]
    assert len(states) == 46_903 and all(s is not None and s.primary for s in states)
    # every non-blank rating is a reply's rating, or the first message's (an opening's)
    rated = sum(r.rating is not None for c in conversations for t_ in c.turns for r in t_.responses)
    opening = result.dropped()["labels of opening utterances"]
    assert rated + opening == 46_903 - 455
    assert sum(c.outcome is not None for c in conversations) == 4312 - 6
    both = {c.id.rsplit("-", 1)[0] for c in conversations if c.outcome is not None}
    assert 2 * 2156 - 6 - len(both) == 2150  # conversations rated by both partners


def _chat(**overrides: Any) -> dict[str, Any]:
    line = {"knowledge_source": ["FS1"]}
    chat: dict[str, Any] = {
        "article_url": "https://example.org/a",
        "config": "A",
        "content": [
            {
                "agent": "agent_1",
                "message": "Seen the game?",
                "sentiment": "Curious to dive deeper",
                "turn_rating": "Good",
            }
            | line,
            {
                "agent": "agent_2",
                "message": "Yes, awful.",
                "sentiment": "Sad",
                "turn_rating": "Poor",
            }
            | line,
            {"agent": "agent_1", "message": "Ha, true.", "sentiment": "Happy", "turn_rating": ""}
            | line,
        ],
        "conversation_rating": {"agent_1": "Excellent", "agent_2": "Not Good"},
    }
    return chat | overrides


def _folder(tmp_path: Path, chats: dict[str, Any]) -> Path:
    folder = tmp_path / "topical_chat"
    folder.mkdir()
    (folder / "valid_freq.json").write_text(json.dumps(chats), encoding="utf-8")
    return folder


def test_each_side_keeps_its_own_labels(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"t_1": _chat()})
    (one, two), result = imported(
        TopicalChatImporter(split="valid_freq"), folder, tmp_path / "out.jsonl"
    )
    assert (one.id, two.id) == (
        "topical-chat-valid_freq-t_1-agent_1",
        "topical-chat-valid_freq-t_1-agent_2",
    )
    # agent_1: their own labels as states, their rating of agent_2's message as the reply's
    assert [t.state.primary for t in one.turns if t.state] == ["Curious to dive deeper", "Happy"]
    assert one.turns[0].responses[0].rating == 1.0 and one.turns[1].feedback == 1.0
    assert one.outcome is not None and one.outcome.rating == 5.0
    # agent_2: agent_1's first message is the opening; agent_2's label of "Yes, awful." is Sad
    assert two.context.opening == "Seen the game?" and two.turns[0].user == "Yes, awful."
    assert two.turns[0].state is not None and two.turns[0].state.emotions == ("Sad",)
    assert two.turns[0].responses[0].rating is None  # "Ha, true." was not rated
    assert two.outcome is not None and two.outcome.rating == 2.0
    assert result.dropped() == {"labels of opening utterances": 1}
    (only,), _ = imported(
        TopicalChatImporter(split="valid_freq", perspective="agent_2"), folder, tmp_path / "b.jsonl"
    )
    assert only.id.endswith("agent_2")


def test_an_unknown_label_is_located(tmp_path: Path) -> None:
    chat = _chat()
    chat["content"][1]["sentiment"] = "Bored"
    folder = _folder(tmp_path, {"t_9": chat})
    with pytest.raises(
        ImportFormatError, match=r"conversation t_9: content\[1\]\.sentiment: label 'Bored'"
    ):
        imported(TopicalChatImporter(split="valid_freq"), folder, tmp_path / "out.jsonl")


def test_the_command_line_imports_one_side_and_the_file_validates(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attunebench.cli import app

    folder = _folder(tmp_path, {"t_1": _chat(), "t_2": _chat()})
    out = tmp_path / "tc.jsonl"
    args = ["data", "import", "topical-chat", str(folder), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--split", "valid_freq", "--perspective", "agent_1"])
    assert result.exit_code == 0, result.output
    assert f"wrote 2 conversations to {out}" in result.output
    checked = CliRunner().invoke(app, ["data", "validate", str(out)])
    assert checked.exit_code == 0 and "valid attunebench/v1 (2 conversations" in checked.output
    refused = CliRunner().invoke(app, [*args, "--split", "test_rare"])
    assert refused.exit_code == 1 and "test_rare.json: file not found" in refused.output
