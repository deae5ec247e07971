"""A fixed slice of a suite for one task: the conversations carrying its items with the shortest
transcripts (short prompts for small models), taken from each corpus part in turn (every
corpus with that gold stays in). The order is deterministic (length, then id), so a second
slice (`skip`) continues it, disjoint from the first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attunebench.data.schema import Conversation
from attunebench.suite.manifest import Manifest
from attunebench.tasks.base import Task


def task_slice(
    task: Task[Any, Any],
    manifest: Manifest,
    conversations: Sequence[Conversation],
    per_task: int,
    skip: int = 0,
) -> list[Conversation]:
    """The `per_task` conversations of the slice (transcripts: the person's messages), after
    the first `skip` of its order."""
    by_id = {c.id: c for c in conversations}
    queues = []
    for part in manifest.parts:
        carrying = [
            by_id[i] for i in part.conversations if i in by_id and _has_items(task, by_id[i])
        ]
        queues.append(sorted(carrying, key=lambda c: (sum(len(t.user) for t in c.turns), c.id)))
    chosen: list[Conversation] = []
    wanted = skip + per_task
    while len(chosen) < wanted and any(queues):
        for queue in queues:
            if queue and len(chosen) < wanted:
                chosen.append(queue.pop(0))
    return chosen[skip:]


def _has_items(task: Task[Any, Any], conversation: Conversation) -> bool:
    return next(iter(task.items([conversation])), None) is not None
