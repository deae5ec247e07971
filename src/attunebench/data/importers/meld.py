"""MELD: multi-party dialogues from the TV series Friends, an emotion on every utterance
(`SOURCE`). A dialogue is the rows sharing `Dialogue_ID` within one split, ordered by
`Utterance_ID`; one speaker is the user, the others' lines between the user's are the reply.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from attunebench.data.importers._base import (
    ImportFormatError,
    ImportOptionError,
    Location,
    Split,
    Tally,
    conversation,
    label,
    split_files,
    text,
)
from attunebench.data.importers._csv_rows import csv_rows
from attunebench.data.importers._dialogue import Utterance, build_dialogue
from attunebench.data.schema import Conversation, Source, Taxonomy
from attunebench.data.taxonomy import load_taxonomy

FILES = {"train": "train_sent_emo.csv", "valid": "dev_sent_emo.csv", "test": "test_sent_emo.csv"}
COLUMNS = ("Utterance", "Speaker", "Emotion", "Sentiment", "Dialogue_ID", "Utterance_ID")
TAXONOMY_ID = "meld"


@dataclass(frozen=True)
class Row:
    location: Location
    order: int
    speaker: str
    text: str
    emotion: str


def _int(value: str, location: Location, field: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ImportFormatError(location, field, f"{value!r} is not an integer") from None


def _dialogues(path: Path, taxonomy: Taxonomy, tally: Tally) -> dict[int, list[Row]]:
    dialogues: dict[int, list[Row]] = defaultdict(list)
    for location, values in csv_rows(path, COLUMNS):
        tally["utterances"] += 1
        tally[f"emotion:{values['Emotion']}"] += 1
        tally[f"sentiment:{values['Sentiment']}"] += 1
        dialogues[_int(values["Dialogue_ID"], location, "Dialogue_ID")].append(
            Row(
                location=location,
                order=_int(values["Utterance_ID"], location, "Utterance_ID"),
                speaker=text(values["Speaker"], location, "Speaker"),
                text=text(values["Utterance"], location, "Utterance"),
                emotion=label(taxonomy, "emotions", values["Emotion"], location, "Emotion"),
            )
        )
    return dialogues


@dataclass(frozen=True)
class MELDImporter:
    """MELD (Friends): one speaker is the user, the others' lines are the reply; emotions."""

    split: Split = "all"
    user_speaker: str | None = None

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        taxonomy = load_taxonomy(TAXONOMY_ID)
        speakers: Counter[str] = Counter()
        for split, path in split_files(source, FILES, self.split):
            dialogues = _dialogues(path, taxonomy, tally)
            for dialogue_id in sorted(dialogues):
                rows = sorted(dialogues[dialogue_id], key=lambda row: row.order)
                speakers.update(row.speaker for row in rows)
                made = self._conversation(f"meld-{split}-{dialogue_id:04d}", rows, tally)
                if made is not None:
                    yield made
        if self.user_speaker is not None and self.user_speaker not in speakers:
            common = ", ".join(repr(name) for name, _ in speakers.most_common(8))
            raise ImportOptionError(
                f"--user-speaker {self.user_speaker!r} speaks in no dialogue "
                f"(most frequent speakers: {common})"
            )

    def _conversation(
        self, conversation_id: str, rows: list[Row], tally: Tally
    ) -> Conversation | None:
        tally["dialogues"] += 1
        user = self.user_speaker or rows[0].speaker
        if all(row.speaker != user for row in rows):
            tally[f"dropped:dialogues without {user}"] += 1
            return None
        tally["dropped:emotions of other speakers"] += sum(row.speaker != user for row in rows)
        utterances = [
            Utterance(
                is_user=row.speaker == user,
                text=row.text,
                speaker=row.speaker,
                emotions=(row.emotion,) if row.speaker == user else (),
            )
            for row in rows
        ]
        dialogue = build_dialogue(utterances, reply_id="others", tally=tally)
        return conversation(
            rows[0].location,
            id=conversation_id,
            source=SOURCE,
            taxonomy=TAXONOMY_ID,
            context={"opening": dialogue.opening, "labels": {"user_speaker": user}},
            turns=dialogue.turns,
        )


SOURCE = Source(
    kind="imported",
    name="MELD",
    license="GPL-3.0 (repository licence; the text is Friends dialogue, research use)",
    url="https://github.com/declare-lab/MELD",
    citation=(
        "Poria, Hazarika, Majumder, Naik, Cambria, Mihalcea. MELD: A Multimodal Multi-Party "
        "Dataset for Emotion Recognition in Conversation. ACL 2019."
    ),
    provenance={"state": "third-party"},
    notes=(
        "Scripted multi-party TV dialogue. The user is one speaker (by default each dialogue's "
        "first); the other speakers' lines between the user's messages are the reply (speaker "
        "names are not written into the text). Emotions are crowd workers' labels "
        "(third-party); only the user's are imported, as state; sentiment is not imported."
    ),
)
