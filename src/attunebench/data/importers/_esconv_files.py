"""The three ESConv file shapes, read into one: a session of utterance lines plus its metadata.
MultiESC's `valid|test.jsonl` re-process the HF dialogues with consecutive utterances merged;
only their human `feedback` is used, attached to the HF dialogue after checking that situation
and speaker runs agree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from attunebench.data.importers._base import (
    ImportFormatError,
    Location,
    Raw,
    iter_jsonl,
    json_dialogues,
    require_file,
)

Score = Annotated[int, Field(ge=1, le=5)]


class SeekerSurvey(Raw):
    initial_emotion_intensity: Score | None = None
    final_emotion_intensity: Score | None = None
    empathy: Score | None = None
    relevance: Score | None = None


class Survey(Raw):
    seeker: SeekerSurvey = SeekerSurvey()
    supporter: dict[str, int] = Field(default_factory=dict)


class Meta(Raw):
    """The conversation-level fields every variant shares."""

    emotion_type: str
    problem_type: str | None = None
    experience_type: str | None = None
    situation: str | None = None
    survey_score: Survey = Survey()
    seeker_question1: str | None = None
    seeker_question2: str | None = None
    supporter_question1: str | None = None
    supporter_question2: str | None = None


class HFUtterance(Raw):
    text: str
    speaker: Literal["usr", "sys"]
    strategy: str | None = None


class HFDialogue(Meta):
    dialog: list[HFUtterance]


class FailedAnnotation(Raw):
    strategy: str | None = None
    feedback: Score | None = None


class FailedUtterance(Raw):
    speaker: Literal["speaker", "listener"]
    annotation: FailedAnnotation = FailedAnnotation()
    content: str


class FailedDialogue(Meta):
    dialog: list[FailedUtterance]


class MultiUtterance(Raw):
    speaker: Literal["usr", "sys"]
    feedback: Score | None = None


class MultiDialogue(Raw):
    situation: str
    dialog: list[MultiUtterance]


@dataclass(frozen=True)
class Line:
    """One utterance before mapping: side, text, the supporter's strategy, the seeker's feedback."""

    is_user: bool
    text: str
    field: str
    """Where the text is in the record, for error messages: `dialog[3].text`."""
    strategy: str | None = None
    strategy_field: str = ""
    feedback: int | None = None


@dataclass(frozen=True)
class Session:
    location: Location
    meta: Meta
    lines: tuple[Line, ...]


def hf_sessions(path: Path) -> Iterator[Session]:
    for location, raw in iter_jsonl(require_file(path), HFDialogue):
        lines = tuple(
            Line(
                u.speaker == "usr", u.text, f"dialog[{i}].text", u.strategy, f"dialog[{i}].strategy"
            )
            for i, u in enumerate(raw.dialog)
        )
        yield Session(location, raw, lines)


def failed_sessions(path: Path) -> Iterator[Session]:
    for location, raw in json_dialogues(path, require_file(path).read_bytes(), FailedDialogue):
        lines = tuple(
            Line(
                u.speaker == "speaker",
                u.content,
                f"dialog[{i}].content",
                strategy=u.annotation.strategy,
                strategy_field=f"dialog[{i}].annotation.strategy",
                feedback=u.annotation.feedback,
            )
            for i, u in enumerate(raw.dialog)
        )
        yield Session(location, raw, lines)


def _with_feedback(session: Session, location: Location, multi: MultiDialogue) -> Session:
    """Attach MultiESC's feedback to the first utterance of the matching HF run of utterances."""
    runs = [list(run) for _, run in groupby(session.lines, key=lambda line: line.is_user)]
    speakers = ["usr" if run[0].is_user else "sys" for run in runs]
    if multi.situation != session.meta.situation or speakers != [u.speaker for u in multi.dialog]:
        raise ImportFormatError(location, "dialog", f"does not align with {session.location}")
    lines: list[Line] = []
    for run, merged in zip(runs, multi.dialog, strict=True):
        first, *rest = run
        lines += [
            dataclasses.replace(first, feedback=merged.feedback),
            *rest,
        ]
    return Session(session.location, session.meta, tuple(lines))


def multiesc_sessions(folder: Path, split: str) -> Iterator[Session]:
    """HF dialogues of `split`, each carrying the feedback from its MultiESC counterpart."""
    multi_path = require_file(folder / "multiesc" / f"{split}.jsonl")
    hf = hf_sessions(folder / f"{split}.jsonl")
    for location, multi in iter_jsonl(multi_path, MultiDialogue):
        session = next(hf, None)
        if session is None:
            raise ImportFormatError(location, "dialog", f"more dialogues than {split}.jsonl")
        yield _with_feedback(session, location, multi)
    if next(hf, None) is not None:
        raise ImportFormatError(
            Location(multi_path), "dialog", f"fewer dialogues than {split}.jsonl"
        )
