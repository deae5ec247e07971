"""The tasks through the real runner: every task gives records, and the run is complete."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from task_harness import HashEncoder

from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.engine import RECORDS_FILE, RunConfig, read_records, run
from attunebench.models.mock import MockProvider
from attunebench.models.modelsfile import ModelEntry
from attunebench.models.proxy import ProxyJudge
from attunebench.tasks import load_tasks


async def test_all_tasks_run_on_the_sample_with_a_baseline_a_mock_and_the_proxy_judge(
    tmp_path: Path,
) -> None:
    config = RunConfig(
        data=sample_path(),
        out=tmp_path / "run",
        tasks=("all",),
        # names unlike their specs, as a models file gives them: tasks only ever see names
        models=(
            ModelEntry(name="subject", spec="mock/s"),
            ModelEntry(name="baseline/random", spec="baseline/random"),
        ),
        judges=(ModelEntry(name="offline-judge", spec="proxy/minilm"),),
        task_options={"preference": {"context": "both"}},
        cache_path=tmp_path / "cache.sqlite",
        progress=False,
        check_servers=False,
        limit=4,
    )
    providers = {"subject": MockProvider("s"), "offline-judge": ProxyJudge(encoder=HashEncoder())}
    result = await run(config, providers=providers)
    assert result.complete and result.failed == 0
    # a task with no item on these conversations says so (no chat of the sample was held with
    # a model: the thumbs audit among them; rating's items are the replies' own ratings)
    tasks = {name: load_tasks().get(name)() for name in load_tasks().names()}
    first = read_conversations(sample_path())[:4]  # the limit
    empty = {name for name, task in tasks.items() if not any(task.items(first))}
    assert set(result.empty_tasks) == empty and "judge_thumbs" in empty
    records = read_records(config.out / RECORDS_FILE)
    made = Counter((r.task, r.model) for r in records)
    for name, task in tasks.items():
        if name not in empty and task.evaluates == "models":
            assert made[name, "subject"] > 0 and made[name, "baseline/random"] > 0, name
    assert {r.model for r in records if r.task == "judge_audit"} == {"offline-judge"}
    assert {r.variant for r in records if r.task == "preference"} == {"blind", "informed"}
    assert {r.task for r in records} == set(load_tasks().names()) - set(result.empty_tasks)
    statuses = Counter(r.status for r in records)
    assert statuses["ok"] == len(records)  # the mock and the baseline answer in the asked JSON
    response = [r for r in records if r.task == "response"]
    assert all(len(r.verdicts) == 5 for r in response)
    assert {v.judge for r in response for v in r.verdicts} == {"offline-judge"}
    again = await run(config, providers=providers)
    assert again.complete and again.totals.calls == 0  # resumed: nothing left to call
