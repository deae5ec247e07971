"""Any utterance-per-row corpus in CSV (or TSV): columns name the conversation, speaker and text.

Rows of one conversation must be contiguous (so a large file streams); within one they are in
file order, or sorted by `order_col`. One speaker is the user (each conversation's first
speaker unless `user_speaker` names one); every other speaker's rows between two user messages
form the reply, prefixed with speaker names when a conversation has several other speakers.

Optional label columns, values split on `label_sep` and mapped onto `taxonomy`:
- `emotion_col` on a user row: the user's state at that turn;
- `behavior_col` on a reply row: that reply's behaviors;
- `rating_col` on a reply row rates that reply; on a user row it is the user's feedback on every
  reply since their previous feedback (the ESConv convention). Needs the rating scale.
`provenance`, when given, declares who gave all of these labels.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from attunebench.data.importers._base import (
    ImportFormatError,
    ImportOptionError,
    LabelKind,
    Location,
    Tally,
    choose,
    conversation,
    label,
    number,
    text,
)
from attunebench.data.importers._csv_rows import csv_rows
from attunebench.data.importers._dialogue import Utterance, build_dialogue
from attunebench.data.schema import PROVENANCES, Conversation, Source, Taxonomy
from attunebench.data.taxonomy import DEFAULT_TAXONOMY_ID, load_taxonomy


Row = tuple[Location, dict[str, str]]


@dataclass(frozen=True)
class CsvImporter:
    conversation_col: str
    speaker_col: str
    text_col: str
    emotion_col: str | None = None
    behavior_col: str | None = None
    rating_col: str | None = None
    order_col: str | None = None
    user_speaker: str | None = None
    taxonomy: str = DEFAULT_TAXONOMY_ID
    name: str | None = None
    license: str | None = None
    provenance: str | None = None
    rating_low: float | None = None
    rating_high: float | None = None
    label_sep: str = ","
    delimiter: str = ","

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        taxonomy = load_taxonomy(self.taxonomy)
        record_source = self._source(source)
        columns = [self.conversation_col, self.speaker_col, self.text_col]
        columns += [
            c for c in (self.emotion_col, self.behavior_col, self.rating_col, self.order_col) if c
        ]
        name = record_source.name
        for key, rows in self._conversations(csv_rows(source, columns, self.delimiter)):
            made = self._conversation(f"{name}-{key}", rows, taxonomy, record_source, tally)
            if made is not None:
                yield made

    def _source(self, path: Path) -> Source:
        if self.rating_col and (self.rating_low is None or self.rating_high is None):
            raise ImportOptionError("a rating column needs the rating scale (low and high)")
        labelled = {
            "state": self.emotion_col,
            "behaviors": self.behavior_col,
            "rating": self.rating_col,
        }
        provenance = {}
        if self.provenance is not None:
            chosen = choose("provenance", self.provenance, PROVENANCES)
            provenance = {field: chosen for field, column in labelled.items() if column}
        return Source.model_validate(
            {
                "kind": "imported",
                "name": self.name or path.stem,
                "license": self.license,
                "provenance": provenance,
                "rating_scale": None
                if self.rating_col is None
                else {"low": self.rating_low, "high": self.rating_high},
                "notes": f"Imported from {path.name}: one utterance a row; the user is "
                + (
                    repr(self.user_speaker)
                    if self.user_speaker
                    else "each conversation's first speaker"
                )
                + ", other speakers' rows between the user's messages are the reply.",
            }
        )

    def _conversations(self, rows: Iterator[Row]) -> Iterator[tuple[str, list[Row]]]:
        """Contiguous runs of rows sharing a conversation value."""
        seen: set[str] = set()
        current: list[Row] = []
        for location, values in rows:
            key = values[self.conversation_col].strip()
            if not key:
                raise ImportFormatError(location, self.conversation_col, "empty conversation id")
            if current and key != current[0][1][self.conversation_col].strip():
                yield self._flush(current, seen)
                current = []
            if not current and key in seen:
                raise ImportFormatError(
                    location,
                    self.conversation_col,
                    f"conversation {key!r} continues after other conversations "
                    "(keep its rows together)",
                )
            current.append((location, values))
        if current:
            yield self._flush(current, seen)

    def _flush(self, rows: list[Row], seen: set[str]) -> tuple[str, list[Row]]:
        key = rows[0][1][self.conversation_col].strip()
        seen.add(key)
        if self.order_col is not None:
            column = self.order_col
            rows = sorted(rows, key=lambda row: number(row[1][column], row[0], column))
        return key, rows

    def _labels(
        self, column: str | None, row: Row, taxonomy: Taxonomy, kind: LabelKind
    ) -> tuple[str, ...]:
        if column is None:
            return ()
        location, values = row
        raw = [part.strip() for part in values[column].split(self.label_sep) if part.strip()]
        return tuple(label(taxonomy, kind, part, location, column) for part in raw)

    def _rating(self, row: Row) -> float | None:
        if self.rating_col is None or not row[1][self.rating_col].strip():
            return None
        value = number(row[1][self.rating_col], row[0], self.rating_col)
        low, high = self.rating_low, self.rating_high  # both set: `_source` checks it first
        if low is not None and high is not None and not low <= value <= high:
            raise ImportFormatError(
                row[0], self.rating_col, f"{value:g} is outside the scale {low:g}-{high:g}"
            )
        return value

    def _conversation(
        self,
        conversation_id: str,
        rows: list[Row],
        taxonomy: Taxonomy,
        source: Source,
        tally: Tally,
    ) -> Conversation | None:
        tally["conversations"] += 1
        speakers = [
            text(values[self.speaker_col], location, self.speaker_col) for location, values in rows
        ]
        user = self.user_speaker or speakers[0]
        if user not in speakers:
            tally[f"dropped:conversations without {user}"] += 1
            return None
        utterances = []
        for row, speaker in zip(rows, speakers, strict=True):
            is_user = speaker == user
            tally["rows:user" if is_user else "rows:reply"] += 1
            rating = self._rating(row)
            utterances.append(
                Utterance(
                    is_user=is_user,
                    text=text(row[1][self.text_col], row[0], self.text_col),
                    speaker=speaker,
                    emotions=self._labels(
                        self.emotion_col if is_user else None, row, taxonomy, "emotions"
                    ),
                    behaviors=self._labels(
                        None if is_user else self.behavior_col, row, taxonomy, "behaviors"
                    ),
                    rating=None if is_user else rating,
                    feedback=rating if is_user else None,
                )
            )
        others = set(speakers) - {user}
        dialogue = build_dialogue(
            utterances, reply_id="reply", tally=tally, name_speakers=len(others) > 1
        )
        return conversation(
            rows[0][0],
            id=conversation_id,
            source=source,
            taxonomy=taxonomy.id,
            context={"opening": dialogue.opening},
            turns=dialogue.turns,
        )
