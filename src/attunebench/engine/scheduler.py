"""Scheduling: one unit of work is one conversation for one model, its items in turn order.

Within a unit, items run one after another, turn by turn (every task's items for turn 0, then
turn 1, ...), so prompts that share the conversation so far reach the server back to back and
a prefix cache (vLLM, SGLang, llama.cpp) serves them. Many units run at once, bounded by the
number of workers; the endpoints' own limits bound the calls.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from attunebench.engine.caller import Engine, ItemCaller
from attunebench.records import ItemRecord
from attunebench.tasks.base import Item, Task

RecordKey = tuple[str, str, str, int, str, str]


def record_key(item: Item, model: str) -> RecordKey:
    """The key `ItemRecord.key` will have for this item and model."""
    return (item.task, model, item.conversation.id, item.turn_index, item.item_id, item.variant)


@dataclass(frozen=True, slots=True)
class Unit:
    conversation_id: str
    model: str
    work: tuple[tuple[Task, Item], ...]


def plan_units(
    planned: Iterable[tuple[Task, Item]], models: list[str], done: set[RecordKey]
) -> list[Unit]:
    """Group (task, item) pairs by conversation and model, in turn order, minus what is done.

    Conversations keep their order in the dataset; within one, turn order comes first and the
    order of tasks and items second (a stable sort).
    """
    by_conversation: dict[str, list[tuple[Task, Item]]] = {}
    for task, item in planned:
        by_conversation.setdefault(item.conversation.id, []).append((task, item))
    units = []
    for conversation_id, work in by_conversation.items():
        ordered = sorted(work, key=lambda pair: pair[1].turn_index)
        for model in models:
            todo = tuple(p for p in ordered if record_key(p[1], model) not in done)
            if todo:
                units.append(Unit(conversation_id, model, todo))
    return units


def finish_record(record: ItemRecord, item: Item, model: str, caller: ItemCaller) -> ItemRecord:
    """Check the record is the one asked for; take call figures from what the engine saw."""
    if record.key != record_key(item, model):
        raise ValueError(
            f"task {item.task!r} returned a record for {record.key} "
            f"while evaluating {record_key(item, model)}"
        )
    update: dict[str, object] = dict(caller.totals())
    if record.status == "failed":  # a failure is never scored as an answer
        update.update(score=None, scores={})
    return record.model_copy(update=update)


async def run_units(
    units: list[Unit],
    *,
    engine: Engine,
    judges: list[str],
    workers: int,
    on_record: Callable[[ItemRecord], None],
) -> None:
    """Evaluate every unit with at most `workers` units in progress; report each record."""
    queue = deque(units)

    async def worker() -> None:
        while queue:
            unit = queue.popleft()
            for task, item in unit.work:
                caller = ItemCaller(engine)
                record = await task.evaluate(item, unit.model, caller, judges)
                on_record(finish_record(record, item, unit.model, caller))

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, min(workers, len(units)))):
            group.create_task(worker())
