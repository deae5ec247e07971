"""From a corpus's flat utterances to attunebench/v1 turns, the same way for every importer.

A turn is one user message and the reply that followed it: consecutive utterances of one side
merge (newline-joined, labels united), the other side's utterances before the user's first
become `context.opening`, and a user's feedback rates every reply since their previous feedback.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby

from attunebench.data.importers._base import Tally, unique
from attunebench.data.schema import Response, State, Turn


@dataclass(frozen=True)
class Utterance:
    """One corpus utterance, already checked and mapped onto the taxonomy."""

    is_user: bool
    text: str
    speaker: str = ""
    emotions: tuple[str, ...] = ()
    behaviors: tuple[str, ...] = ()
    rating: float | None = None
    """The reply's own rating (a reply utterance only; a merged reply gets the mean)."""
    feedback: float | None = None
    """A user utterance's rating of the replies since the previous feedback."""


@dataclass(frozen=True)
class Dialogue:
    opening: str | None
    turns: tuple[Turn, ...]


def _text(block: Sequence[Utterance]) -> str:
    # Only what was said: a speaker's name (a column value, a list literal) is no part of it.
    return "\n".join(u.text for u in block)


def _state(block: Sequence[Utterance]) -> State | None:
    emotions = unique([e for u in block for e in u.emotions])
    if not emotions:
        return None
    # A primary label is only honest when the merged utterances agree on one.
    return State(emotions=emotions, primary=emotions[0] if len(emotions) == 1 else None)


def _feedback_targets(
    blocks: Sequence[tuple[bool, list[Utterance]]], tally: Tally
) -> tuple[dict[int, float], dict[int, float]]:
    """(block index of each rated reply -> its rating, of each user message that gave it -> the
    same). ESConv's seekers rated after every few messages, so one feedback covers all replies
    since the previous one; one with no reply since then (or only the opening) rates nothing."""
    ratings: dict[int, float] = {}
    given: dict[int, float] = {}
    pending: list[int] = []
    for index, (is_user, block) in enumerate(blocks):
        if not is_user:
            pending += [index] if index > 0 else []
            continue
        for utterance in block:
            if utterance.feedback is None:
                continue
            if pending:
                ratings.update(dict.fromkeys(pending, utterance.feedback))
                given[index] = utterance.feedback
                pending = []
            else:
                tally["dropped:feedback ratings with no new reply to rate"] += 1
    return ratings, given


def build_dialogue(
    utterances: Iterable[Utterance], *, reply_id: str, tally: Tally, model: str | None = None
) -> Dialogue:
    """Merge runs of one side, then pair each user message with the reply that followed it
    (`model`: who wrote the replies, where the corpus says)."""
    blocks = [(is_user, list(run)) for is_user, run in groupby(utterances, key=lambda u: u.is_user)]
    ratings, feedback = _feedback_targets(blocks, tally)
    opening = None
    if blocks and not blocks[0][0]:
        opening_block = blocks[0][1]
        opening = _text(opening_block)
        labelled = sum(1 for u in opening_block if u.behaviors or u.rating is not None)
        if labelled:
            tally["dropped:labels of opening utterances"] += labelled
    turns: list[Turn] = []
    for index, (is_user, block) in enumerate(blocks):
        if not is_user:
            continue
        responses: tuple[Response, ...] = ()
        if index + 1 < len(blocks):
            reply = blocks[index + 1][1]
            own = [u.rating for u in reply if u.rating is not None]
            responses = (
                Response(
                    id=reply_id,
                    text=_text(reply),
                    behaviors=unique([b for u in reply for b in u.behaviors]),
                    rating=sum(own) / len(own) if own else ratings.get(index + 1),
                    model=model,
                ),
            )
        turns.append(
            Turn(
                index=len(turns),
                user="\n".join(u.text for u in block),
                state=_state(block),
                responses=responses,
                feedback=feedback.get(index),
                continued=reply_id if responses else None,
            )
        )
    return Dialogue(opening=opening, turns=tuple(turns))
