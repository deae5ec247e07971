"""Plan-time applicability: a (task, model) pair the model cannot answer is left out, not failed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from attunebench.analysis import load_runs
from attunebench.answerform import AnswerForm
from attunebench.cli import app
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.engine import RECORDS_FILE, RunConfig, read_records, read_run_info, run
from attunebench.models.mock import MockProvider
from attunebench.models.modelsfile import ModelEntry
from attunebench.models.registry import make_provider
from attunebench.tasks import load_tasks
from attunebench.tasks.base import PlanError
from attunebench.tasks.helpers.fitting import examples

BASELINES = ("baseline/random", "baseline/majority", "baseline/lexicon")


@pytest.fixture
def split(tmp_path: Path) -> tuple[Path, Path]:
    """The sample cut in two as the demo cuts it: evaluated data and a disjoint train split."""
    sample = read_conversations(sample_path())
    data, train = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    write_conversations(data, sample[1::2])
    write_conversations(train, sample[0::2])
    return data, train


def demo_like(data: Path, train: Path, out: Path, **options: Any) -> RunConfig:
    models = tuple(
        ModelEntry(
            name=spec,
            spec=spec,
            options={"train": str(train)} if spec == "baseline/majority" else {},
        )
        for spec in BASELINES
    )
    fields: dict[str, Any] = {
        "data": data,
        "out": out,
        "models": models,
        "tasks": ("all",),
        "judges": (ModelEntry(name="judge", spec="mock/judge"),),
        "progress": False,
        "check_servers": False,
        "cache_path": out.parent / "cache.sqlite",
        **options,
    }
    return RunConfig(**fields)


async def test_a_baseline_is_left_out_exactly_where_it_has_no_answer_and_the_run_completes(
    tmp_path: Path, split: tuple[Path, Path]
) -> None:
    config = demo_like(*split, tmp_path / "run")
    result = await run(config, providers={"judge": MockProvider("judge")})
    assert result.complete and result.failed == 0 and result.planned > 0
    tasks = [load_tasks().get(name)() for name in load_tasks().names()]
    subject = [t for t in tasks if t.evaluates == "models"]
    train = read_conversations(split[1])
    # random answers every form; lexicon those whose answer names labels; majority those its
    # train split (the sample's other half) has items of, as each task builds them
    expected = {
        (t.name, "baseline/lexicon")
        for t in subject
        if not all(type(f).labelled is not AnswerForm.labelled for f in t.subject_forms)
    } | {(t.name, "baseline/majority") for t in subject if not examples(t, train)}
    skipped = {(s.task, s.model) for s in result.skipped if s.model in BASELINES}
    assert skipped == expected
    assert ("preference", "baseline/lexicon") in skipped  # a pick names no label
    records = read_records(config.out / RECORDS_FILE)
    made = Counter((r.task, r.model) for r in records)
    empty = set(result.empty_tasks)
    for t in subject:
        for spec in BASELINES:
            assert (made[t.name, spec] > 0) == (
                (t.name, spec) not in skipped and t.name not in empty
            )
    assert all(r.status != "failed" for r in records)
    info = read_run_info(config.out)
    assert info is not None and info.complete and info.planned_items == len(records)
    listed = {(s.task, s.model): s.reason for s in info.skipped}
    assert skipped <= set(listed)
    assert "'response'" in listed["response", "baseline/lexicon"]
    for task, model in skipped:
        if model == "baseline/majority":
            assert listed[task, model].endswith(f"{split[1]} has no item asking '{task}' questions")
    again = await run(config, providers={"judge": MockProvider("judge")})
    assert again.complete and again.totals.calls == 0  # the same plan resumes: nothing to do


async def test_the_analysis_names_the_skipped_pairs_as_not_applicable(
    tmp_path: Path, split: tuple[Path, Path]
) -> None:
    config = demo_like(*split, tmp_path / "run", tasks=("response",), limit=2)
    await run(config, providers={"judge": MockProvider("judge")})
    notices = [n for n in load_runs([config.out]).notices if n.kind == "skipped"]
    # a reply is not an answer naming labels; majority learns replies from the train split
    assert {(n.task, n.model) for n in notices} == {("response", "baseline/lexicon")}
    assert all(n.message.startswith("not applicable:") for n in notices)


@pytest.mark.parametrize(
    ("judge", "options", "lacking"),
    [
        ("baseline/longer", {}, "'judge_rubric'"),  # it picks between replies, never scores one
        ("baseline/majority", {"judge_mode": "rubric"}, "'judge_rubric'"),
        ("baseline/longer", {"judge_mode": "pairwise"}, None),
        ("mock/j", {}, None),  # no declared kinds: it answers every one
    ],
)
async def test_a_judge_that_cannot_answer_what_a_task_asks_is_a_plan_error(
    tmp_path: Path,
    split: tuple[Path, Path],
    judge: str,
    options: dict[str, str],
    lacking: str | None,
) -> None:
    data, train = split
    entry = ModelEntry(
        name="j", spec=judge, options={"train": str(train)} if judge == "baseline/majority" else {}
    )
    config = demo_like(
        data,
        train,
        tmp_path / "run",
        judges=(entry,),
        tasks=("response",),
        task_options={"response": options},
        limit=1,
    )
    if lacking is None:
        result = await run(config)
        assert result.complete and result.failed == 0 and result.planned > 0
        return
    with pytest.raises(
        PlanError,
        match=rf"judge 'j' cannot judge task 'response': .*{lacking}",
    ):
        await run(config)
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_the_run_command_prints_one_line_per_skipped_pair(
    tmp_path: Path, split: tuple[Path, Path]
) -> None:
    data, _ = split
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--data",
            str(data),
            "--out",
            str(out),
            "--task",
            "all",
            "--limit",
            "1",
            "--model",
            "baseline/lexicon",
            "--model",
            "baseline/random",
            "--judge",
            "mock/j",
            "--no-cache",
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("not applicable")]
    lexicon = make_provider("baseline/lexicon")
    tasks = [load_tasks().get(name)() for name in load_tasks().names()]
    lacking = [
        t.name
        for t in tasks
        if t.evaluates == "models" and not all(lexicon.answers_form(f) for f in t.subject_forms)
    ]
    assert lines == [
        f"not applicable: task {task} for baseline/lexicon "
        f"(baseline/lexicon names labels, and '{task}' answers name none)"
        for task in sorted(lacking)
    ]
    assert json.loads((out / "run.json").read_text())["complete"] is True
