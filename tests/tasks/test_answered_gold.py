"""A replayed answer read as the gold (`Scoring.answered_gold`): the gold the item would carry had
the person answered so. Scored against the gold it makes, every answer is right, whatever it
was; the item stays where it was (its level, position and lengths); a pick that follows the
order shown names no reply and makes no gold."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.engine import RECORDS_FILE, RunConfig, read_records, run
from attunebench.models.modelsfile import ModelEntry
from attunebench.models.registry import SpecError, make_provider
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Scoring, Task
from attunebench.tasks.preference import PreferencePrediction
from testkit.conversations import as_bot_chat, with_feedback


def replayable() -> list[Task[Any, Any]]:
    made = [load_tasks().get(name)() for name in load_tasks().names()]
    return [t for t in made if type(t.scoring).answered_gold is not Scoring.answered_gold]


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sample answered by oracles always right and always wrong, on every task."""
    folder = tmp_path_factory.mktemp("answered")
    sample = read_conversations(sample_path())
    data = folder / "gold.jsonl"
    write_conversations(data, [*sample[:6], with_feedback(sample[0]), as_bot_chat(sample[1])])
    names = load_tasks().names()
    models = tuple(
        ModelEntry(name=name, spec="sim/oracle", options={"accuracy": dict.fromkeys(names, p)})
        for name, p in (("right", 1.0), ("wrong", 0.0))
    )
    config = RunConfig(
        data=data, out=folder / "run", models=models, cache_path=None, progress=False
    )
    asyncio.run(run(config))
    return data, folder / "run"


def test_every_answer_is_right_against_the_gold_it_makes(answered: tuple[Path, Path]) -> None:
    data, rundir = answered
    conversations = read_conversations(data)
    records = read_records(rundir / RECORDS_FILE)
    tasks = replayable()
    assert {t.name for t in tasks} == {"emotion", "outcome", "preference", "rating"}
    made = 0
    for task in tasks:
        items = {
            (i.conversation.id, i.turn_index, i.item_id, i.variant): i
            for i in task.items(conversations)
        }
        for record in (r for r in records if r.task == task.name and r.status == "ok"):
            item = items[record.conversation_id, record.turn_index, record.item_id, record.variant]
            prediction = task.scoring.view(record).prediction
            gold = task.scoring.answered_gold(item.gold, prediction)
            if gold is None:
                continue
            made += 1
            assert gold.level == item.gold.level and gold.derived == item.gold.derived
            assert task.score(replace(item, gold=gold), prediction).score == pytest.approx(1.0)
    assert made > 0


def test_a_pick_that_follows_the_order_makes_no_gold(answered: tuple[Path, Path]) -> None:
    task = load_tasks().get("preference")()
    [item, *_] = task.items(read_conversations(answered[0]))
    gold = item.gold
    assert (
        task.scoring.answered_gold(gold, PreferencePrediction(ab=gold.first, ba=gold.second))
        is None
    )
    picked = task.scoring.answered_gold(gold, PreferencePrediction(ab=gold.second, ba=gold.second))
    assert picked is not None and picked.chosen == gold.second and not picked.tie


def test_an_oracle_accuracy_outside_0_to_1_is_refused_naming_the_task_and_the_value() -> None:
    with pytest.raises(SpecError) as refused:
        make_provider("sim/oracle", accuracy={"emotion": 1.5})
    assert "emotion = 1.5 is not a chance between 0 and 1" in str(refused.value)
    assert make_provider("sim/oracle", accuracy={"emotion": 1.0})  # the trap: 1 is a chance
