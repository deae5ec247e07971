"""Replay: each task's question about the person, asked of the simulated person about
themselves, scored against the real person's own answer.

The tasks are those a model answers with no judge; the items, a few of each conversation's
whose gold the person gave about themselves (`first-person` provenance of `Task.gold_fields`),
spread over it. The asking is an ordinary run of the engine (`Session.replay`, in
`DIR/replay/`), read back here as any run is: `attunebench report DIR/replay` reads it too, its
rollouts together as one model (`analysis.comparisons.rollouts`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from attunebench.analysis.comparisons.rollouts import pooled
from attunebench.analysis.loading import Runs, load_runs
from attunebench.data.schema import Conversation
from attunebench.records import ItemRecord
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Item, Task

FIRST_PERSON = "first-person"
REPLAY_RUN = "replay"  # the run directory's name inside the validation folder
ROLLOUT = "rollout"  # the key of a replayed record's `meta` that holds its rollout's seed
T = TypeVar("T")
ItemKey = tuple[str, int, str, str]  # an item's conversation, turn, id and variant


def record_key(record: ItemRecord) -> ItemKey:
    """The item a record answers (its task and model aside)."""
    return record.key[2:]


def first_person(task: Task[Any, Any], conversation: Conversation) -> bool:
    """Whether the source declares the person gave this task's gold themselves: any of its
    gold fields (or a part of one, as `state.intensity` of `state`) is first-person."""
    given = conversation.source.provenance
    return any(
        who == FIRST_PERSON and (name == field or name.startswith(field + "."))
        for field in task.gold_fields
        for name, who in given.items()
    )


def replay_tasks(seed: int = 0, runs: Runs | None = None) -> list[Task[Any, Any]]:
    """Every registered task a model answers with no judge, made as the runs to rank made it
    (so its items are theirs), else with its defaults and `seed`."""
    registry = load_tasks()
    made = [
        registry.get(name)(**{"seed": seed, **(runs.made_with(name) if runs else {})})
        for name in registry.names()
    ]
    return [task for task in made if not task.needs_judge and task.evaluates == "models"]


def spread(found: Sequence[T], count: int | None) -> list[T]:
    """At most `count` of these, evenly spaced from the first to the last (all: None).

    >>> spread(list(range(10)), 4)
    [0, 3, 6, 9]
    """
    if count is None or len(found) <= count:
        return list(found)
    at = np.unique(np.round(np.linspace(0, len(found) - 1, count)).astype(int))
    return [found[i] for i in at.tolist()]


def replay_items(
    task: Task[Any, Any], conversations: Iterable[Conversation], per_conversation: int | None = None
) -> list[Item[Any]]:
    """The task's items on the conversations whose gold for it is first-person, at most
    `per_conversation` of each conversation's, spread over it."""
    by_conversation: dict[str, list[Item[Any]]] = defaultdict(list)
    for item in task.items(c for c in conversations if first_person(task, c)):
        by_conversation[item.conversation.id].append(item)
    return [item for found in by_conversation.values() for item in spread(found, per_conversation)]


@dataclass(frozen=True)
class Replayed:
    """One task's replay: its items, and every rollout's record of each (seed in `meta`)."""

    task: Task[Any, Any]
    items: tuple[Item[Any], ...]
    records: tuple[ItemRecord, ...]

    def by_key(self) -> dict[ItemKey, Item[Any]]:
        return {(i.conversation.id, i.turn_index, i.item_id, i.variant): i for i in self.items}

    def rollouts(self) -> list[int]:
        return sorted({rollout_of(r) for r in self.records})


def rollout_of(record: ItemRecord) -> int:
    return int(record.meta[ROLLOUT])


def rollout_seeds(runs: Runs) -> dict[str, int]:
    """The replay run's models, each a rollout (one alone too, `--seeds 1`), by their seed."""
    return {m.name or m.spec: int(m.params["seed"]) for m in runs.runs[0].info.models}


def read_replay(
    folder: Path,
    tasks: Sequence[Task[Any, Any]],
    conversations: Sequence[Conversation],
    per_conversation: int | None,
) -> list[Replayed]:
    """Each task's replay as the run directory holds it: its items and every rollout's records,
    the rollout's seed in each record's `meta`."""
    runs = load_runs([folder])
    seeds = rollout_seeds(runs)
    by_task: dict[str, list[ItemRecord]] = {}
    for record in pooled(runs.records, seeds):  # a choice answer once, not once per rollout
        found = record.model_copy(update={"meta": {**record.meta, ROLLOUT: seeds[record.model]}})
        by_task.setdefault(record.task, []).append(found)
    replayed = []
    for task in tasks:
        if records := by_task.get(task.name):
            items = replay_items(task, conversations, per_conversation)
            replayed.append(Replayed(task, tuple(items), tuple(records)))
    return replayed
