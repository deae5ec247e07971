"""USS: task-oriented (MultiWOZ) and movie-recommendation (ReDial) dialogues with annotators'
satisfaction scores (`SOURCE`).

Lines are `role \\t text \\t action \\t sat1,sat2,...`, sessions separated by a blank line, each
ending with a `USER \\t OVERALL` line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Annotated, Literal

from attunebench.data.importers._base import (
    ImportFormatError,
    Location,
    Tally,
    conversation,
    decoded_lines,
    expect_fields,
    split_files,
)
from attunebench.data.importers._dialogue import Utterance, build_dialogue
from attunebench.data.schema import Conversation, RatingScale, Source

PARTS = {"mwoz": "MWOZ.txt", "redial": "ReDial.txt"}
TAXONOMY_ID = "uss"

SOURCE = Source(
    kind="imported",
    name="USS",
    license="none stated (satisfaction annotations: research use; MultiWOZ MIT, ReDial CC BY 4.0)",
    url="https://github.com/sunnweiwei/user-satisfaction-simulation",
    citation=(
        "Sun, Zhang, Balog, Ren, Ren, Chen, de Rijke. Simulating User Satisfaction for the "
        "Evaluation of Task-oriented Dialogue Systems. SIGIR 2021."
    ),
    provenance={"rating": "third-party", "outcome": "third-party"},
    rating_scale=RatingScale(
        low=1, high=5, description="annotators' judgment of the user's satisfaction"
    ),
    notes=(
        "USER lines are the user's messages, SYSTEM lines the replies (consecutive lines of one "
        "side merged, newline-joined; the few lines with no text are left out). A reply's "
        "rating is the mean of the annotators' 1-5 satisfaction scores on the USER line right "
        "after it, kept as that turn's feedback too (third-party, not self-report); the OVERALL "
        "line's mean is outcome.rating. "
        "Raters' individual scores and the action column are not imported."
    ),
)


@dataclass(frozen=True)
class Line:
    location: Location
    role: str
    text: str
    action: str
    satisfaction: float | None


def _satisfaction(raw: str, location: Location, tally: Tally) -> float:
    try:
        scores = [int(value) for value in raw.split(",")]
    except ValueError:
        raise ImportFormatError(
            location, "satisfaction", f"{raw!r} is not a comma list of integers"
        ) from None
    if not all(1 <= score <= 5 for score in scores):
        raise ImportFormatError(location, "satisfaction", f"{raw!r} has a score outside 1-5")
    mean = sum(scores) / len(scores)
    tally[f"rating:{round(mean)}"] += 1
    return mean


def _line(raw: str, location: Location, tally: Tally) -> Line | None:
    """One line, or None for a line with no text (ReDial has a few; their scores go with them)."""
    fields = expect_fields(raw.rstrip("\r\n").split("\t"), 4, location, "line")
    role, utterance, action, satisfaction = fields
    if role not in ("USER", "SYSTEM"):
        raise ImportFormatError(location, "role", f"{role!r} is neither USER nor SYSTEM")
    tally["lines"] += 1
    tally[f"lines:{role}"] += 1
    rated = role == "USER"
    if rated and not satisfaction.strip():
        raise ImportFormatError(location, "satisfaction", "missing on a USER line")
    score = _satisfaction(satisfaction, location, tally) if rated else None
    if not utterance.strip():
        tally["dropped:lines with empty text"] += 1
        return None
    return Line(
        location=location,
        role=role,
        text=utterance.strip(),
        action=action,
        satisfaction=score,
    )


def _sessions(path: Path, tally: Tally) -> Iterator[list[Line]]:
    """Runs of non-blank lines, each without the lines that hold no text."""
    for blank, run in groupby(decoded_lines(path), key=lambda pair: not pair[1].strip()):
        read = [] if blank else [_line(raw, Location(path, number), tally) for number, raw in run]
        session = [line for line in read if line is not None]
        if session:
            yield session


def _conversation(conversation_id: str, lines: list[Line], tally: Tally) -> Conversation | None:
    tally["sessions"] += 1
    overall = [line for line in lines if line.role == "USER" and line.text == "OVERALL"]
    messages = [line for line in lines if not (line.role == "USER" and line.text == "OVERALL")]
    tally["dropped:actions"] += sum(1 for line in messages if line.action.strip())
    utterances = [
        Utterance(is_user=line.role == "USER", text=line.text, feedback=line.satisfaction)
        for line in messages
    ]
    dialogue = build_dialogue(utterances, reply_id="system", tally=tally)
    if not dialogue.turns:  # only SYSTEM lines (and OVERALL): no user message to make a turn of
        tally["dropped:sessions without a user message"] += 1
        return None
    return conversation(
        lines[0].location,
        id=conversation_id,
        source=SOURCE,
        taxonomy=TAXONOMY_ID,
        context={"opening": dialogue.opening},
        turns=dialogue.turns,
        outcome={"rating": overall[-1].satisfaction} if overall else None,
    )


@dataclass(frozen=True)
class USSImporter:
    """USS: annotators' 1-5 satisfaction rates the system reply before each user turn."""

    part: Annotated[Literal["mwoz", "redial", "all"], "MultiWOZ, ReDial or both."] = "all"

    def read(self, source: Path, tally: Tally) -> Iterator[Conversation]:
        for part, path in split_files(source, PARTS, self.part, option="part"):
            for number, lines in enumerate(_sessions(path, tally)):
                made = _conversation(f"uss-{part}-{number:04d}", lines, tally)
                if made is not None:
                    yield made
