"""The run a suite fixes (`run --suite`), and a run per task on a fixed slice of it (`make
demo-llm`, the ladder, the Qwen validity benchmark): the suite knows nothing of runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from pathlib import Path

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.engine.runner import RunConfig
from attunebench.records import SuiteInfo
from attunebench.suite.build import load_suite, write_suite_data
from attunebench.suite.manifest import load_manifest
from attunebench.suite.slices import task_slice
from attunebench.tasks import make_tasks


def suite_run_config(name: str, out: Path) -> tuple[RunConfig, Path]:
    """The run a suite fixes, with no models yet (its data built into OUT/suite/, every digest
    checked), and the suite's train split."""
    built = load_suite(name)
    evaluated, train = write_suite_data(built, out / "suite")
    manifest = built.manifest
    config = RunConfig(
        data=evaluated,
        out=out,
        models=(),
        tasks=tuple(manifest.tasks),
        task_options=manifest.tasks,
        seed=manifest.seed,
        suite=SuiteInfo(
            name=manifest.name,
            version=manifest.version,
            digest=built.digest,
            train=train.relative_to(out).as_posix(),
            train_sha256=manifest.train_sha256,
        ),
    )
    return config, train


def suite_slices(
    name: str,
    out: Path,
    per_task: int,
    tasks: Collection[str] | None = None,
    skip: int = 0,
) -> tuple[list[RunConfig], Path]:
    """Per task of the suite (those in `tasks` where given), a run of that task alone on its
    slice (`per_task` conversations after the first `skip`), not marked as the suite (a
    slice's numbers are not the suite's); and the suite's train split."""
    suite, train = suite_run_config(name, out)
    manifest = load_manifest(name)
    conversations = read_conversations(suite.data)
    configs = []
    for task in make_tasks(suite.tasks, suite.task_options, suite.seed):
        if tasks is not None and task.name not in tasks:
            continue
        path = out / "data" / (f"{task.name}.after-{skip}.jsonl" if skip else f"{task.name}.jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_conversations(path, task_slice(task, manifest, conversations, per_task, skip))
        configs.append(dataclasses.replace(suite, data=path, tasks=(task.name,), suite=None))
    return configs, train
