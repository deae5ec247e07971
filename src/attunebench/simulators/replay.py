"""Replay: each task's question about the person, asked of the simulated person about
themselves, scored against the real person's own answer.

Which tasks: every registered task that a model answers with no judge (the declarations say:
`needs_judge`, `evaluates`). Which items: those whose gold the person gave about themselves,
read from the source's declared provenance of the task's gold fields (`Task.gold_fields`;
`first-person`). The question is the task's, wrapped in the first-person frame
(`prompting.as_person`), and the engine's one evaluation (`engine.evaluate`) asks, parses and
scores it as it does a model's answer, with the task's own parser and scorer: an answer that
does not parse is `invalid` and scored as the task's worst value, never dropped.

Items run conversation by conversation, each conversation's tasks and turns in order and each
item's rollouts back to back, so a server's prefix cache serves the shared beginning.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from attunebench.data.schema import Conversation
from attunebench.engine.evaluate import evaluate
from attunebench.records import ItemRecord
from attunebench.simulators.prompting import as_person
from attunebench.simulators.session import Session
from attunebench.tasks import load_tasks
from attunebench.tasks.base import CallRole, Item, Output, Query, Task

FIRST_PERSON = "first-person"
ROLLOUT = "rollout"  # the key of a replayed record's `meta` that holds its rollout's seed
T = TypeVar("T")
ItemKey = tuple[str, int, str, str]  # an item's conversation, turn, id and variant


def item_key(conversation_id: str, turn_index: int, item_id: str, variant: str) -> ItemKey:
    return (conversation_id, turn_index, item_id, variant)


def first_person(task: Task[Any, Any], conversation: Conversation) -> bool:
    """Whether the source declares the person gave this task's gold themselves: any of its
    gold fields (or a part of one, as `state.intensity` of `state`) is first-person."""
    given = conversation.source.provenance
    return any(
        who == FIRST_PERSON and (name == field or name.startswith(field + "."))
        for field in task.gold_fields
        for name, who in given.items()
    )


def replay_tasks(
    seed: int = 0, made_with: Mapping[str, Mapping[str, Any]] | None = None
) -> list[Task[Any, Any]]:
    """Every registered task a model answers with no judge, with the options (and seed) a
    task's runs were made with where `made_with` has them (so its items are theirs), else
    its defaults."""
    registry = load_tasks()
    given = made_with or {}
    made = [
        registry.get(name)(**{"seed": seed, **given.get(name, {})}) for name in registry.names()
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
    """One task's replay: its items, and every rollout's record of each (`meta` holds the
    rollout's seed)."""

    task: Task[Any, Any]
    items: tuple[Item[Any], ...]
    records: tuple[ItemRecord, ...]

    def rollouts(self) -> list[int]:
        return sorted({rollout_of(r) for r in self.records})


def rollout_of(record: ItemRecord) -> int:
    return int(record.meta[ROLLOUT])


@dataclass(frozen=True)
class AsPerson:
    """What a replay asks through: the task's query in the first person, sampled for one
    rollout, of the session's simulator."""

    session: Session
    rollout: int

    async def ask(self, model: str, query: Query, item: Item[Any], role: CallRole) -> Output:
        return await self.session.ask(as_person(query), item, self.rollout)


async def replay(
    session: Session,
    tasks: Sequence[Task[Any, Any]],
    conversations: Sequence[Conversation],
    per_conversation: int | None = None,
) -> list[Replayed]:
    """Every task's first-person items (at most `per_conversation` of each conversation's),
    replayed in each rollout the session asks them in."""
    work = {
        task.name: (task, replay_items(task, conversations, per_conversation)) for task in tasks
    }
    by_conversation: dict[str, list[tuple[Task[Any, Any], Item[Any]]]] = defaultdict(list)
    for task, items in work.values():
        for item in items:
            by_conversation[item.conversation.id].append((task, item))
    mode = "choice" if session.choosing else "generate"

    async def one_conversation(units: list[tuple[Task[Any, Any], Item[Any]]]) -> list[ItemRecord]:
        made = []
        for task, item in units:
            asked = mode if mode in task.answer_modes else "generate"
            for rollout in session.rollouts_for(generated=asked == "generate"):
                found = await evaluate(
                    task, item, session.simulator, AsPerson(session, rollout), [], asked
                )
                made.append(found.model_copy(update={"meta": {ROLLOUT: rollout}}))
        return made

    answered = await session.each("replay", by_conversation.values(), one_conversation)
    records = [record for found in answered for record in found]
    return [
        Replayed(task, tuple(items), tuple(r for r in records if r.task == task.name))
        for task, items in work.values()
        if items
    ]
