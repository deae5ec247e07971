"""Conversations marked careless where they were collected (`attunebench collect` marks a
participant who clicks through: see docs/collecting.md): the conversation-level label
`careless` is "yes". Tasks leave them out unless the run keeps them (`run --include-careless`),
and the run counts them among its left-out items, so the report says how many.
"""

from __future__ import annotations

from collections.abc import Sequence

from attunebench.data.schema import Conversation

CARELESS = "careless"  # the conversation label ("yes" or "no")


def leave_out_careless(
    conversations: Sequence[Conversation],
) -> tuple[list[Conversation], int]:
    """The conversations not marked careless, and how many were left out."""
    kept = [c for c in conversations if c.context.labels.get(CARELESS) != "yes"]
    return kept, len(conversations) - len(kept)
