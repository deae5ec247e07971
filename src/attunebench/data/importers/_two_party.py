"""Two-person chats where each side labelled its own messages and rated the other's (ConvAI1,
Topical-Chat).

The format holds one person's view, so a chat is read from one participant's side (a
*perspective*): their messages are the user's turns with their own labels, the partner's are
the replies with this participant's ratings of them. Read from both sides, every label lands in
exactly one conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from attunebench.data.importers._base import Tally
from attunebench.data.importers._dialogue import Dialogue, Utterance, build_dialogue


@dataclass(frozen=True)
class Message:
    """One message of a two-person chat, labels already mapped."""

    speaker: str
    text: str
    emotion: str | None = None
    """The writer's own label of this message."""
    rating: float | None = None
    """The partner's rating of this message."""


def perspective(messages: Sequence[Message], me: str, *, model: str, tally: Tally) -> Dialogue:
    """The chat as `me` held it: `me`'s messages are the user's, the partner's are replies
    (their `model` says what the partner was: a person, or which bot). Each turn's `feedback`
    is the user's rating of the reply just before it."""
    utterances = [
        Utterance(
            is_user=message.speaker == me,
            text=message.text,
            speaker=message.speaker,
            emotions=(message.emotion,) if message.speaker == me and message.emotion else (),
            rating=message.rating if message.speaker != me else None,
        )
        for message in messages
    ]
    dialogue = build_dialogue(utterances, reply_id="partner", tally=tally, model=model)
    turns = list(dialogue.turns)
    for index in range(1, len(turns)):
        before = turns[index - 1].continued_response()
        if before is not None and before.rating is not None:
            turns[index] = turns[index].model_copy(update={"feedback": before.rating})
    return Dialogue(dialogue.opening, tuple(turns))
