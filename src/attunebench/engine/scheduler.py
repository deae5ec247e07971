"""Scheduling: one unit of work is one conversation for one model, its items in turn order.

Within a unit, items run one after another, task by task and within a task turn by turn: the
prompt for turn t+1 is the prompt for turn t with the next exchange added, so a prefix cache
serves everything but the new part (llama.cpp's server keeps only the last prompt, which is
why this order, not turn by turn across tasks, is the one that pays). A batch model's items
are all asked at once instead (its answers come in hours, not turn after turn).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TypeVar

from attunebench.engine.caller import Engine, ItemCaller
from attunebench.engine.evaluate import evaluate
from attunebench.engine.progress import RunProgress
from attunebench.engine.spend import CapReached
from attunebench.records import ItemRecord
from attunebench.tasks.base import AnswerMode, Item, Task
from attunebench.tasks.helpers.twins import is_person_hidden

RecordKey = tuple[str, str, str, int, str, str]
T = TypeVar("T")
R = TypeVar("R")


def record_key(item: Item[Any], model: str) -> RecordKey:
    """The key `ItemRecord.key` will have for this item and model."""
    return (item.task, model, item.conversation.id, item.turn_index, item.item_id, item.variant)


@dataclass(frozen=True, slots=True)
class Unit:
    conversation_id: str
    model: str
    work: tuple[tuple[Task[Any, Any], Item[Any]], ...]


def plan_units(
    planned: Iterable[tuple[Task[Any, Any], Item[Any], Sequence[str]]], done: set[RecordKey]
) -> list[Unit]:
    """Group (task, item, models) by conversation and model, in turn order, minus what is done.
    Conversations, models and tasks keep their order; a turn's items too (a stable sort)."""
    grouped: dict[str, dict[str, list[tuple[Task[Any, Any], Item[Any]]]]] = {}
    task_order: dict[str, int] = {}
    for task, item, models in planned:
        task_order.setdefault(task.name, len(task_order))
        by_model = grouped.setdefault(item.conversation.id, {})
        for model in models:
            todo = by_model.setdefault(model, [])  # made even when done: keeps the order
            if record_key(item, model) not in done:
                todo.append((task, item))

    def position(pair: tuple[Task[Any, Any], Item[Any]]) -> tuple[int, bool, int]:
        # A task's person-hidden twins after its shown items: each run of prompts still
        # extends the one before it.
        return (task_order[pair[0].name], is_person_hidden(pair[1].variant), pair[1].turn_index)

    return [
        Unit(conversation_id, model, tuple(sorted(work, key=position)))
        for conversation_id, by_model in grouped.items()
        for model, work in by_model.items()
        if work
    ]


async def each_unit(
    engine: Engine,
    units: Sequence[T],
    model_of: Callable[[T], str],
    step: Callable[[T], Awaitable[R]],
) -> list[R]:
    """`step` on every unit, results in the units' order. Each endpoint (of the model a unit
    asks) gets its own queue and as many workers as it allows calls in flight: a full server
    never holds up another's work. At the run's dollar cap a worker stops (the calls in flight
    finish), and the units it did not reach give no result."""
    queues: dict[str, deque[int]] = {}
    sizes: dict[str, int] = {}
    for at, unit in enumerate(units):
        endpoint = engine.models[model_of(unit)].endpoint
        queues.setdefault(endpoint.name, deque()).append(at)
        sizes[endpoint.name] = endpoint.concurrency
    found: dict[int, R] = {}

    async def worker(queue: deque[int]) -> None:
        while queue:
            at = queue.popleft()
            try:
                found[at] = await step(units[at])
            except CapReached:
                return

    async with asyncio.TaskGroup() as group:
        for name, queue in queues.items():
            for _ in range(min(sizes[name], len(queue))):
                group.create_task(worker(queue))
    return [found[at] for at in sorted(found)]


async def each_shown(
    engine: Engine,
    model: str,
    doing: str,
    work: Sequence[T],
    step: Callable[[T], Awaitable[R]],
    *,
    progress: bool,
) -> list[R]:
    """`step` on every piece of work, each asking `model` first (`each_unit`); with `progress`,
    a run's bar says what it is `doing` and how many are done."""
    with RunProgress(len(work), 0, engine.ledger, enabled=progress) as bar:
        bar.describe(doing)

        async def counted(unit: T) -> R:
            done = await step(unit)
            bar.advance()
            return done

        return await each_unit(engine, work, lambda _: model, counted)


async def run_units(
    units: list[Unit],
    *,
    engine: Engine,
    judges: list[str],
    on_record: Callable[[ItemRecord], None],
) -> None:
    """Evaluate every unit (`each_unit`); report each record as it is made."""

    async def one(model: str, mode: AnswerMode, task: Task[Any, Any], item: Item[Any]) -> None:
        caller = ItemCaller(engine)
        record = await evaluate(task, item, model, caller, judges, mode)
        update: dict[str, object] = dict(caller.totals())  # the call figures the engine saw
        if record.status == "failed":  # a failure is never scored
            update.update(score=None, scores={})
        on_record(record.model_copy(update=update))

    async def evaluated(unit: Unit) -> None:
        bound = engine.models[unit.model]
        mode: AnswerMode = "choice" if bound.choosing else "generate"
        if bound.entry.batch:
            done = await asyncio.gather(
                *(one(unit.model, mode, t, i) for t, i in unit.work), return_exceptions=True
            )
            for error in (d for d in done if isinstance(d, BaseException)):
                raise error
        else:
            for task, item in unit.work:
                await one(unit.model, mode, task, item)

    await each_unit(engine, units, attrgetter("model"), evaluated)
