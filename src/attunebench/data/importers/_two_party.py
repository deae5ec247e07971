"""Two-person chats where each side labelled its own messages and rated the other's.

ConvAI1 and Topical-Chat store a chat as one list of messages, each with the writer's own label
(Topical-Chat's sentiment) and the partner's rating of it (a thumb, a 5-level quality). The
format holds one person's view: the user's messages with their own states, and the replies
with the user's ratings. So a chat is read from one participant's side (a *perspective*): their
messages are the user's turns and carry their own labels; the partner's messages are the
replies and carry this participant's ratings of them. The partner's own labels and the
partner's ratings of this participant belong to the partner's perspective, where they are
first-person too. Read from both sides, every label lands in exactly one conversation.

A reply's rating is also the `feedback` of the user's next turn, so that the rating task can
ask for it at the point where the person had read the reply (history up to that reply), the
same way `uss` and ESConv's feedback are asked. A reply with no next turn (the chat's last
message) keeps its rating but gives no feedback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from attunebench.data.importers._base import Tally
from attunebench.data.importers._dialogue import Dialogue, Utterance, build_dialogue
from attunebench.data.schema import Turn


@dataclass(frozen=True)
class Message:
    """One message of a two-person chat, labels already mapped."""

    speaker: str
    text: str
    emotion: str | None = None
    """The writer's own label of this message."""
    rating: float | None = None
    """The partner's rating of this message."""


def perspective(
    messages: Sequence[Message], me: str, *, reply_id: str, model: str, tally: Tally
) -> Dialogue:
    """The chat as `me` held it: `me`'s messages are the user's, the partner's are replies
    (their `model` says what the partner was: a person, or which bot)."""
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
    dialogue = build_dialogue(utterances, reply_id=reply_id, tally=tally)
    turns = [
        turn.model_copy(
            update={
                "responses": tuple(r.model_copy(update={"model": model}) for r in turn.responses)
            }
        )
        for turn in dialogue.turns
    ]
    return Dialogue(dialogue.opening, feedback_after_replies(turns))


def feedback_after_replies(turns: Sequence[Turn]) -> tuple[Turn, ...]:
    """Each turn's `feedback` is the user's rating of the reply just before it."""
    out = list(turns)
    for index in range(1, len(out)):
        before = out[index - 1].continued_response()
        if before is not None and before.rating is not None:
            out[index] = out[index].model_copy(update={"feedback": before.rating})
    return tuple(out)
