"""GoEmotions: Reddit comments with crowd raters' emotion labels, each a one-turn conversation
with no reply (`SOURCE`). Files are TSV without a header (`text \\t label ids \\t comment id`);
a few texts are double-quoted, so the csv module parses them.
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
    require_file,
    split_files,
    text,
    text_lines,
)
from attunebench.data.importers._csv_rows import csv_records
from attunebench.data.schema import Conversation, Source

FILES = {"valid": "dev.tsv", "test": "test.tsv"}
TAXONOMY_ID = "goemotions"

SOURCE = Source(
    kind="imported",
    name="GoEmotions",
    license="Apache-2.0 (comments are Reddit content; names masked as [NAME])",
    url="https://github.com/google-research/google-research/tree/master/goemotions",
    citation=(
        "Demszky, Movshovitz-Attias, Ko, Cowen, Nemade, Ravi. GoEmotions: A Dataset of "
        "Fine-Grained Emotions. ACL 2020."
    ),
    provenance={"state": "third-party"},
    notes=(
        "Single Reddit comments, not dialogue: one turn each, no reply. Emotions are crowd "
        "raters' labels (third-party), multi-label; primary is set only for single-label comments."
    ),
)


def _emotions(raw: str, labels: list[str], location: Location) -> tuple[str, ...]:
    try:
        return tuple(labels[int(value)] for value in raw.split(","))
    except (ValueError, IndexError):
        raise ImportFormatError(
            location, "labels", f"{raw!r} is not a comma list of ids 0-{len(labels) - 1}"
        ) from None


def _conversation(
    split: str, location: Location, fields: list[str], labels: list[str], tally: Tally
) -> Conversation:
    comment, raw_labels, comment_id = expect_fields(fields, 3, location, "row")
    emotions = _emotions(raw_labels, labels, location)
    tally["comments"] += 1
    tally["multi-label" if len(emotions) > 1 else "single-label"] += 1
    for emotion in emotions:
        tally[f"emotion:{emotion}"] += 1
    state = {"emotions": emotions, "primary": emotions[0] if len(emotions) == 1 else None}
    return conversation(
        location,
        id=f"goemotions-{split}-{text(comment_id, location, 'comment_id')}",
        source=SOURCE,
        taxonomy=TAXONOMY_ID,
        turns=[{"index": 0, "user": text(comment, location, "text"), "state": state}],
    )


@dataclass(frozen=True)
class GoEmotionsImporter:
    """GoEmotions: each Reddit comment is a one-turn conversation with raters' emotions."""

    split: HeldOutSplit = "all"

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        emotions = require_file(source / "emotions.txt")
        labels = [line.strip() for _, line in text_lines(emotions)]
        for split, path in split_files(source, FILES, self.split):
            first_line: dict[str, int | None] = {}  # ids come from the file: two would clash
            for location, fields in csv_records(path, delimiter="\t"):
                made = _conversation(split, location, fields, labels, tally)
                first = first_line.setdefault(made.id, location.line)
                if first != location.line:
                    raise ImportFormatError(
                        location, "comment_id", f"{fields[2]!r} repeats the comment on line {first}"
                    )
                yield made
