"""DailyDialog (XDailyDialog's English dev/test): everyday two-person dialogues, one a line
(`text` split by `__eou__`, `topic`, `acts`, `emotions`). With no speaker column, speakers
alternate and the first is the user; what the labels become is `SOURCE`'s notes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from attunebench.data.importers._base import (
    HeldOutSplit,
    ImportFormatError,
    Location,
    Tally,
    conversation,
    expect_fields,
    split_files,
    text,
    text_lines,
)
from attunebench.data.importers._dialogue import Utterance, build_dialogue
from attunebench.data.schema import Conversation, Source

FILES = {"valid": "en_dev_human.txt", "test": "en_test_human.txt"}
TAXONOMY_ID = "dailydialog"
EMOTIONS = ("no emotion", "anger", "disgust", "fear", "happiness", "sadness", "surprise")
ACTS = {1: "inform", 2: "question", 3: "directive", 4: "commissive"}
TOPICS = {
    1: "Ordinary Life",
    2: "School Life",
    3: "Culture & Education",
    4: "Attitude & Emotion",
    5: "Relationship",
    6: "Tourism",
    7: "Health",
    8: "Work",
    9: "Politics",
    10: "Finance",
}

SOURCE = Source(
    kind="imported",
    name="DailyDialog",
    license="CC BY-NC-SA 4.0 (non-commercial, share-alike)",
    url="https://github.com/liuzeming01/XDailyDialog",
    citation=(
        "Li, Su, Shen, Li, Cao, Niu. DailyDialog: A Manually Labelled Multi-turn Dialogue "
        "Dataset. IJCNLP 2017. Liu et al. XDailyDialog: A Multilingual Parallel Dialogue Corpus. "
        "ACL 2023."
    ),
    provenance={"state": "third-party", "behaviors": "third-party"},
    notes=(
        "XDailyDialog's English dev/test split (not the official DailyDialog split). Speakers "
        "alternate; the first speaker is the user and the second's utterances are the replies. "
        "Per-utterance emotions and dialogue acts are annotators' labels (third-party): the "
        "user's emotion is state, the reply's dialogue act is its behaviors (what it does, not "
        "a support strategy); the user's acts and the replier's emotions are not imported. "
        "Text is whitespace-tokenised as in the corpus ('Why not ? See .')."
    ),
)


def _ids(raw: str, names: dict[int, str], location: Location, field: str) -> list[str]:
    try:
        return [names[int(value)] for value in raw.split()]
    except (ValueError, KeyError):
        raise ImportFormatError(
            location, field, f"{raw!r} holds an unknown id (known: {sorted(names)})"
        ) from None


def _dialogue(number: int, line: str, location: Location, split: str, tally: Tally) -> Conversation:
    fields = expect_fields(line.rstrip("\r\n").split("\t"), 4, location, "line")
    raw_text, raw_topic, raw_acts, raw_emotions = fields
    parts = raw_text.split("__eou__")
    if parts and not parts[-1].strip():
        parts.pop()  # the text ends with a separator
    texts = [text(part, location, f"text[{i}]") for i, part in enumerate(parts)]
    acts = _ids(raw_acts, ACTS, location, "acts")
    emotions = _ids(raw_emotions, dict(enumerate(EMOTIONS)), location, "emotions")
    if not len(texts) == len(acts) == len(emotions):
        raise ImportFormatError(
            location,
            "acts/emotions",
            f"{len(texts)} utterances but {len(acts)} acts and {len(emotions)} emotions",
        )
    topic = _ids(raw_topic, TOPICS, location, "topic")
    tally["dialogues"] += 1
    utterances = []
    for i, (utterance, act, emotion) in enumerate(zip(texts, acts, emotions, strict=True)):
        is_user = i % 2 == 0
        tally["utterances"] += 1
        tally[f"emotion:{emotion}"] += 1
        tally[f"act:{act}"] += 1
        tally["dropped:" + ("acts of user utterances" if is_user else "emotions of replies")] += 1
        utterances.append(
            Utterance(
                is_user=is_user,
                text=utterance,
                emotions=(emotion,) if is_user else (),
                behaviors=() if is_user else (act,),
            )
        )
    dialogue = build_dialogue(utterances, reply_id="B", tally=tally)
    return conversation(
        location,
        id=f"dailydialog-{split}-{number:04d}",
        source=SOURCE,
        taxonomy=TAXONOMY_ID,
        context={"topic": topic[0] if topic else None},
        turns=dialogue.turns,
    )


@dataclass(frozen=True)
class DailyDialogImporter:
    """DailyDialog: the first speaker is the user; annotators' emotions and dialogue acts."""

    split: HeldOutSplit = "all"

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        for split, path in split_files(source, FILES, self.split):
            for number, (location, line) in enumerate(text_lines(path)):
                yield _dialogue(number, line, location, split, tally)
