"""Scheduling: each conversation's items reach a model back to back, in turn order."""

from __future__ import annotations

from pathlib import Path

from echo_task import EchoTask, OtherTask
from engine_harness import RunFn, write_dataset

from attunebench.answerform import TaskHint
from attunebench.data.jsonl import read_conversations
from attunebench.engine.scheduler import plan_units, record_key
from attunebench.models import Message, MockProvider
from attunebench.tasks.base import Item


def test_units_group_by_conversation_and_model_in_turn_order(tmp_path: Path) -> None:
    conversations = read_conversations(write_dataset(tmp_path / "d.jsonl", 3, 3))
    task = EchoTask()
    planned = [(task, item, ["a", "b"]) for item in task.items(conversations)][::-1]
    done = {record_key(planned[0][1], "a")}  # c2 turn 2 for model a is already recorded
    units = plan_units(planned, done)
    assert [(u.conversation_id, u.model) for u in units] == [
        ("c2", "a"),
        ("c2", "b"),
        ("c1", "a"),
        ("c1", "b"),
        ("c0", "a"),
        ("c0", "b"),
    ]
    assert [i.turn_index for _, i in units[0].work] == [0, 1]
    assert [i.turn_index for _, i in units[1].work] == [0, 1, 2]


async def test_a_conversation_reaches_the_server_back_to_back(
    run_echo: RunFn, tmp_path: Path
) -> None:
    order: list[str] = []

    def answer(messages: list[Message], hint: TaskHint | None) -> str:
        order.append(messages[-1].content)
        return "ok"

    data = write_dataset(tmp_path / "d.jsonl", conversations=3, turns=4)
    await run_echo({"m": MockProvider(outputs=answer)}, data=data, concurrency=1)
    # With one call in flight, the conversations still interleave across the two workers,
    # but within each, turns come strictly in order.
    for conversation in ("0", "1", "2"):
        turns = [text for text in order if text.startswith(f"conversation {conversation} ")]
        assert turns == [f"conversation {conversation} turn {t}" for t in range(4)]


def test_item_keys_match_record_keys(tmp_path: Path) -> None:
    conversation = read_conversations(write_dataset(tmp_path / "d.jsonl", 1, 1))[0]
    item = next(EchoTask().items([conversation]))
    assert isinstance(item, Item)
    assert record_key(item, "m") == ("echo", "m", "c0", 0, "reply", "")


def test_within_a_unit_each_task_runs_its_turns_in_order(tmp_path: Path) -> None:
    conversations = read_conversations(write_dataset(tmp_path / "d.jsonl", 1, 3))
    first, second = EchoTask(), OtherTask()
    planned = [(t, i, ["m"]) for t in (first, second) for i in t.items(conversations)]
    planned.sort(key=lambda triple: -triple[1].turn_index)  # arrive out of order
    (unit,) = plan_units(planned, set())
    assert [(i.task, i.turn_index) for _, i in unit.work] == [
        ("echo", 0),
        ("echo", 1),
        ("echo", 2),
        ("other", 0),
        ("other", 1),
        ("other", 2),
    ]
