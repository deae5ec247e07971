"""MELD: the counts in meld/SOURCE.md, the choice of user, and speaker-named replies."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest
from import_harness import imported, message_lines, prefixed

from attunebench.data.importers import ImportFormatError, MELDImporter

EMOTIONS = {
    "neutral": 6436,
    "joy": 2308,
    "surprise": 1636,
    "anger": 1607,
    "sadness": 1002,
    "disgust": 361,
    "fear": 358,
}
SENTIMENTS = {"neutral": 6436, "negative": 4184, "positive": 3088}
HEADER = ["Sr No.", "Utterance", "Speaker", "Emotion", "Sentiment", "Dialogue_ID", "Utterance_ID"]


def test_counts_match_the_source(data_dir: Path, tmp_path: Path) -> None:
    conversations, result = imported(MELDImporter(), data_dir / "meld", tmp_path / "meld.jsonl")
    assert Counter(c.id.split("-")[1] for c in conversations) == {
        "train": 1038,
        "valid": 114,
        "test": 280,
    }
    assert sum(message_lines(conversations)) == 13_708
    assert prefixed(result.tally, "emotion") == EMOTIONS
    assert prefixed(result.tally, "sentiment") == SENTIMENTS
    # only the user's emotions are state; the others' are counted as dropped
    user_emotions = sum(len(t.state.emotions) for c in conversations for t in c.turns if t.state)
    user_lines = message_lines(conversations)[0]
    assert user_emotions <= user_lines
    assert user_lines + result.dropped()["emotions of other speakers"] == 13_708
    assert conversations[0].source.provenance == {"state": "third-party"}


def test_a_named_user_and_speaker_prefixes(data_dir: Path, tmp_path: Path) -> None:
    conversations, result = imported(
        MELDImporter(split="valid", user_speaker="Ross"), data_dir / "meld", tmp_path / "ross.jsonl"
    )
    assert conversations and all(c.context.labels["user_speaker"] == "Ross" for c in conversations)
    assert result.dropped()["dialogues without Ross"] == 114 - len(conversations)
    with open(data_dir / "meld" / "dev_sent_emo.csv", encoding="utf-8", newline="") as handle:
        ross_rows = sum(row["Speaker"] == "Ross" for row in csv.DictReader(handle))
    assert message_lines(conversations)[0] == ross_rows


def _write(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([HEADER, *rows])


def test_mapping_of_a_small_dialogue(tmp_path: Path) -> None:
    folder = tmp_path / "meld"
    folder.mkdir()
    _write(
        folder / "dev_sent_emo.csv",
        [
            ["1", "We were on a break!", "Ross", "anger", "negative", "0", "1"],
            ["2", "Hi.", "Rachel", "neutral", "neutral", "0", "0"],
            ["3", "Oh no.", "Monica", "surprise", "negative", "0", "2"],
            ["4", "Here we go.", "Chandler", "neutral", "neutral", "0", "3"],
            ["5", "Fine.", "Ross", "sadness", "negative", "0", "4"],
        ],
    )
    [conversation], _ = imported(MELDImporter("valid", "Ross"), folder, tmp_path / "out.jsonl")
    assert conversation.context.opening == "Hi."  # ordered by Utterance_ID; no speaker names
    first, second = conversation.turns
    assert first.user == "We were on a break!" and first.state and first.state.primary == "anger"
    assert first.responses[0].text == "Oh no.\nHere we go."
    assert second.user == "Fine." and not second.responses


def test_bad_rows_are_located(tmp_path: Path) -> None:
    folder = tmp_path / "meld"
    folder.mkdir()
    _write(folder / "dev_sent_emo.csv", [["1", "Hi.", "Ross", "elation", "positive", "0", "0"]])
    with pytest.raises(ImportFormatError, match=r"dev_sent_emo\.csv:2: Emotion: label 'elation'"):
        imported(MELDImporter("valid"), folder, tmp_path / "out.jsonl")
    _write(folder / "dev_sent_emo.csv", [["1", "Hi.", "Ross", "joy", "positive", "zero", "0"]])
    with pytest.raises(ImportFormatError, match=r":2: Dialogue_ID: 'zero' is not an integer"):
        imported(MELDImporter("valid"), folder, tmp_path / "out.jsonl")
