"""Fitted baselines taught as a run teaches them, and asked what the tasks ask a model."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation
from attunebench.engine.training import teach
from attunebench.models.base import Provider
from attunebench.tasks import load_tasks

ELSEWHERE = Path("evaluated-elsewhere.jsonl")  # the data a test's baseline is asked about


def taught(provider: Provider, *tasks: str) -> Provider:
    """`provider` with the examples its train split gives for these tasks (default: every
    registered task), as `attunebench run` teaches it."""
    registry = load_tasks()
    made = [registry.get(name)() for name in tasks or registry.names()]
    teach([provider], made, frozenset(), ELSEWHERE)
    return provider


def asked(task: str, conversations: Sequence[Conversation]) -> list[TaskHint]:
    """The hint of every query the task asks a model about these conversations (generate
    form, blind), with its item key as the engine sets it."""
    made = load_tasks().get(task)()
    found = []
    for item in made.items(conversations):
        if item.variant in ("", "blind"):
            for query in made.queries(item, "generate"):
                assert query.hint is not None
                found.append(dataclasses.replace(query.hint, item_key=f"{item.key}|{query.key}"))
    return found
