"""A conversation with the person's own words hidden, as a person-hidden twin's prompts read it.

Every message the person wrote and their pre-chat situation become one fixed placeholder, which
hides even how long they were; the replies, their labels and the gold stay as they were.

>>> from attunebench.data.schema import Context, Source, Turn
>>> said = Conversation(id="c", source=Source(kind="sample", name="s"), taxonomy="t",
...     context=Context(situation="I lost my job."), turns=(Turn(index=0, user="Help me."),))
>>> hidden = hide_person(said)
>>> hidden.turns[0].user == hidden.context.situation == PLACEHOLDER
True
"""

from __future__ import annotations

from typing import Final

from attunebench.data.schema import Conversation

PLACEHOLDER: Final = "[the person's words are hidden]"


def hide_person(conversation: Conversation) -> Conversation:
    """The conversation with every message of the person and their pre-chat words hidden."""
    turns = tuple(turn.model_copy(update={"user": PLACEHOLDER}) for turn in conversation.turns)
    context = conversation.context
    if context.situation is not None:
        context = context.model_copy(update={"situation": PLACEHOLDER})
    return conversation.model_copy(update={"turns": turns, "context": context})
