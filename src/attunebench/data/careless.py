"""Conversations marked careless where they were collected (the label `careless` is "yes"): tasks
leave them out unless the run keeps them (`run --include-careless`), and the report counts them.
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
