"""Guard: a task owns its answers. The stand-ins that answer without reading the prompt
(`mock/default`, `baseline/random`, `sim/oracle`) answer every registered task through the
real engine on data carrying each task's gold, and every item comes back `ok`: none invalid,
none failed, no (task, model) pair left out. A new task that declares its answer form passes
with no edit outside its own module."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.engine import RECORDS_FILE, RunConfig, read_records, run
from attunebench.models.modelsfile import ModelEntry
from attunebench.tasks import load_tasks
from testkit.conversations import as_bot_chat, with_feedback

STAND_INS = ("mock/default", "baseline/random", "sim/oracle")


def entries(*specs: str) -> tuple[ModelEntry, ...]:
    return tuple(ModelEntry(name=spec, spec=spec) for spec in specs)


@pytest.fixture(scope="module")
def gold_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped sample, plus one of its conversations rated by the user every other turn
    (the sample carries no rating gold), and one as a chat with a model, its replies thumbed."""
    sample = read_conversations(sample_path())
    path = tmp_path_factory.mktemp("data") / "gold.jsonl"
    write_conversations(path, [*sample[:6], with_feedback(sample[0]), as_bot_chat(sample[1])])
    return path


async def records_of(data: Path, out: Path, *, judges: tuple[str, ...]) -> Counter[tuple]:
    config = RunConfig(
        data=data,
        out=out,
        models=entries(*STAND_INS),
        judges=entries(*judges),
        cache_path=None,
        progress=False,
        check_servers=False,
    )
    result = await run(config)
    assert result.complete, result.errors
    assert not result.skipped, result.skipped  # each stand-in answers every task
    assert not result.empty_tasks, result.empty_tasks  # the data carries every task's gold
    return Counter((r.task, r.model, r.status) for r in read_records(out / RECORDS_FILE))


async def test_every_stand_in_answers_every_task_with_valid_answers(
    gold_data: Path, tmp_path: Path
) -> None:
    # Judged by the stand-ins that can write every verdict; the oracle judges only where its
    # gold says what the verdict is (the judge audit), so it is a subject here.
    outcomes = await records_of(gold_data, tmp_path / "run", judges=("mock/default",))
    statuses = {status for (_, _, status) in outcomes}
    assert statuses == {"ok"}, outcomes
    subject_tasks = {t for t in load_tasks().names() if load_tasks().get(t)().evaluates == "models"}
    for model in STAND_INS:
        assert {t for (t, m, _) in outcomes if m == model} >= subject_tasks, model


async def test_every_stand_in_answers_the_judges_task(gold_data: Path, tmp_path: Path) -> None:
    judged = [t for t in load_tasks().names() if load_tasks().get(t)().evaluates == "judges"]
    config = RunConfig(
        data=gold_data,
        out=tmp_path / "run",
        models=(),
        judges=entries(*STAND_INS),
        tasks=tuple(judged),
        cache_path=None,
        progress=False,
        check_servers=False,
    )
    result = await run(config)
    assert result.complete and not result.skipped, (result.errors, result.skipped)
    outcomes = Counter((r.model, r.status) for r in read_records(config.out / RECORDS_FILE))
    assert {status for (_, status) in outcomes} == {"ok"}, outcomes
    assert {model for (model, _) in outcomes} == set(STAND_INS)
