"""The run a suite fixes: its data built from the corpora, its tasks with their options, its seed.

The suite (`attunebench.suite`) knows its corpora, items and seed and nothing of runs; this is
where its fixed choices become a `RunConfig`, for `attunebench run --suite`, `make demo-llm` and
the ladder.
"""

from __future__ import annotations

from pathlib import Path

from attunebench.engine.runner import RunConfig
from attunebench.records import SuiteInfo
from attunebench.suite.build import load_suite, write_suite_data


def suite_run_config(name: str, out: Path) -> tuple[RunConfig, Path]:
    """The run a suite fixes, with no models yet: its data (built from the corpora into
    OUT/suite/, every digest checked), its tasks with their options, and its seed; and the
    suite's train split, for fitted baselines."""
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
