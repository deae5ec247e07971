"""A fixed slice of a suite for one task: the conversations carrying its items with the shortest
transcripts, taken from each corpus part in turn.

Small real models on a laptop cannot answer a whole suite in minutes, so `make demo-llm` and
the ladder (`benchmarks/ladder.py`) each score a slice. Taking the shortest transcripts keeps
prompts short; taking them from each part in turn keeps every corpus with that gold in the
slice. The choice is deterministic (length, then id), so every model gets the same items.

A second slice by the same rule is the continuation of that order (`skip`): the conversations
after the first `skip`, so disjoint from the first slice, which it leaves as it was (the order
is fixed before counting, so the first N of a longer slice are the slice of N).
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
    """The `per_task` conversations carrying `task`'s items with the shortest transcripts (the
    person's messages), taken from each of the manifest's corpus parts in turn, the shortest of
    each first; after the first `skip` of that order (a second, disjoint slice)."""
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
