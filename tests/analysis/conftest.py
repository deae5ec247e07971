"""Run directories with planted effects, written by `planted.synthetic`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from attunebench.analysis.loading import Runs, load_runs
from planted.synthetic import Plan, write_run

MakeRun = Callable[..., Path]
Accuracy = Mapping[str, Mapping[str, float]]


@pytest.fixture
def make_run(tmp_path: Path) -> MakeRun:
    """make_run(accuracy, name="run", models=None, **plan_fields) -> the run directory."""

    def make(
        accuracy: Accuracy, name: str = "run", models: list[str] | None = None, **fields: Any
    ) -> Path:
        return write_run(tmp_path / name, Plan(accuracy, **fields), models)

    return make


@pytest.fixture
def load(make_run: MakeRun) -> Callable[..., Runs]:
    """load(accuracy, **plan_fields) -> the loaded runs of one fresh run directory."""

    def run_and_load(accuracy: Accuracy, **fields: Any) -> Runs:
        return load_runs([make_run(accuracy, **fields)])

    return run_and_load
