"""Conversations that carry every task's gold, made from the shipped sample (which has no rating
gold and no chat held with a model), for tests that must reach every registered task."""

from __future__ import annotations

from attunebench.data.schema import Conversation


def with_feedback(conversation: Conversation) -> Conversation:
    """The conversation with the user rating the replies at every other turn (rating gold)."""
    turns = tuple(
        t.model_copy(update={"feedback": float(1 + t.index % 5)}) if t.index % 2 else t
        for t in conversation.turns
    )
    return conversation.model_copy(update={"id": conversation.id + "-rated", "turns": turns})


def thumb(index: int) -> float:
    """Down (1) on even turns, up (5) on odd ones."""
    return 1.0 + 4 * (index % 2)


def as_bot_chat(conversation: Conversation) -> Conversation:
    """The conversation as a chat held with a model: one reply per turn, with a thumb."""
    turns = tuple(
        # Keywords, not a dict of strings: `preference` and `rating` are the turn's and the
        # reply's own fields here, and no task's name stands as a string outside tasks/.
        t.model_copy(
            update=dict(
                responses=(t.responses[0].model_copy(update=dict(rating=thumb(t.index))),),
                preference=None,
                continued=t.responses[0].id,
            )
        )
        for t in conversation.turns
        if t.responses
    )
    context = conversation.context.model_copy(update={"labels": {"partner": "model"}})
    return conversation.model_copy(
        update={"id": conversation.id + "-bot", "turns": turns, "context": context}
    )
