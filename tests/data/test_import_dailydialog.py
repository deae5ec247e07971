"""DailyDialog: the counts in dailydialog/SOURCE.md, the speaker mapping, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_harness import imported, message_lines, prefixed

from attunebench.data.importers import DailyDialogImporter, ImportFormatError
from attunebench.data.taxonomy import load_taxonomy

EMOTIONS = {
    "valid": {
        "no emotion": 7074,
        "happiness": 675,
        "surprise": 103,
        "anger": 80,
        "sadness": 76,
        "fear": 11,
        "disgust": 6,
    },
    "test": {
        "no emotion": 6301,
        "happiness": 1011,
        "surprise": 119,
        "anger": 116,
        "sadness": 105,
        "disgust": 47,
        "fear": 17,
    },
}
ACTS = {
    "valid": {"inform": 3117, "question": 2231, "directive": 1756, "commissive": 921},
    "test": {"inform": 3516, "question": 2204, "directive": 1276, "commissive": 720},
}


@pytest.mark.parametrize(
    ("split", "dialogues", "utterances"), [("valid", 995, 8025), ("test", 996, 7716)]
)
def test_counts_match_the_source(
    data_dir: Path, tmp_path: Path, split: str, dialogues: int, utterances: int
) -> None:
    conversations, result = imported(
        DailyDialogImporter(split=split), data_dir / "dailydialog", tmp_path / "dd.jsonl"
    )
    assert len(conversations) == dialogues
    assert sum(message_lines(conversations)) == utterances
    assert prefixed(result.tally, "emotion") == EMOTIONS[split]
    assert prefixed(result.tally, "act") == ACTS[split]
    assert all(c.id.startswith(f"dailydialog-{split}-") for c in conversations)


def test_first_speaker_is_the_user_with_third_party_labels(data_dir: Path, tmp_path: Path) -> None:
    conversations, result = imported(
        DailyDialogImporter(split="valid"), data_dir / "dailydialog", tmp_path / "dd.jsonl"
    )
    first = conversations[0]
    assert first.turns[0].user == "Can you manage chopsticks ?"
    assert first.turns[0].responses[0].text == "Why not ? See ."
    # emotions 0 0 4 4 6 ...: A's are turns 0, 2, 4 -> no emotion, happiness, surprise
    assert [t.state.primary for t in first.turns[:3] if t.state] == [
        "no emotion",
        "happiness",
        "surprise",
    ]
    # acts 2 1 2 1 2 ...: B's replies are all inform
    assert first.turns[0].responses[0].behaviors == ("inform",)
    assert first.context.topic == "Ordinary Life"
    assert first.source.provenance == {"state": "third-party", "behaviors": "third-party"}
    # the format has nowhere for A's acts or B's emotions; they are counted, not hidden
    user_turns = sum(len(c.turns) for c in conversations)
    assert result.dropped()["acts of user utterances"] == user_turns
    taxonomy = load_taxonomy("dailydialog")
    assert {
        t.state.primary for c in conversations for t in c.turns if t.state
    } <= taxonomy.emotion_names()


def test_malformed_lines_are_located(tmp_path: Path) -> None:
    folder = tmp_path / "dailydialog"
    folder.mkdir()
    path = folder / "en_dev_human.txt"
    path.write_text(
        "Hi . __eou__ Hello . __eou__\t1\t1 1\t0 0\nHi . __eou__\t1\t1\n", encoding="utf-8"
    )
    with pytest.raises(ImportFormatError, match=r"en_dev_human\.txt:2: line: expected 4"):
        imported(DailyDialogImporter(split="valid"), folder, tmp_path / "out.jsonl")
    path.write_text("Hi . __eou__ Hello . __eou__\t1\t1\t0 0\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r":1: acts/emotions: 2 utterances but 1 acts"):
        imported(DailyDialogImporter(split="valid"), folder, tmp_path / "out.jsonl")
    path.write_text("Hi . __eou__\t1\t1\t9\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r":1: emotions: '9' holds an unknown id"):
        imported(DailyDialogImporter(split="valid"), folder, tmp_path / "out.jsonl")
