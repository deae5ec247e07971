"""Helpers shared by the engine tests (imported by conftest and by the killable run script)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import Conversation, Source, Turn
from attunebench.engine import RunResult

RunFn = Callable[..., Awaitable[RunResult]]


def write_dataset(path: Path, conversations: int = 4, turns: int = 3) -> Path:
    source = Source(kind="simulated", name="engine-test")
    write_conversations(
        path,
        [
            Conversation(
                id=f"c{c}",
                source=source,
                taxonomy="attunebench-default",
                turns=tuple(Turn(index=t, user=f"conversation {c} turn {t}") for t in range(turns)),
            )
            for c in range(conversations)
        ],
    )
    return path
