"""Simulator test fixtures: the planted corpora written once per module, runs of simulated
models to rank, and one helper that validates a simulator with the real pipeline."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from attunebench.engine import RunConfig, run
from attunebench.models.base import Provider
from attunebench.models.modelsfile import ModelEntry
from attunebench.simulators import Plan, Sampling, SimulatorsReport, validate
from attunebench.tasks import load_tasks

sys.path.insert(0, str(Path(__file__).parent))
from people import seekers, thumbs, writers, written
from validating import Validate

RESAMPLES = 400  # enough for an interval's side; the statistics' own tests check coverage


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every kind of first-person conversation, in one file."""
    folder = tmp_path_factory.mktemp("people")
    return written(folder / "people.jsonl", [*seekers(14), *writers(8), *thumbs(8)])


@pytest.fixture(scope="module")
def oracle_runs(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> Path:
    """One run of three simulated models that read the gold at planted accuracies, on every
    task the corpus has (their order is known: the more accurate ranks higher)."""
    out = tmp_path_factory.mktemp("runs") / "oracles"
    names = load_tasks().names()
    models = tuple(
        ModelEntry(
            name=f"oracle-{int(100 * accuracy)}",
            spec="sim/oracle",
            options={"accuracy": dict.fromkeys(names, accuracy), "seed": 1},
        )
        for accuracy in (0.95, 0.65, 0.35)
    )
    config = RunConfig(data=corpus, out=out, models=models, cache_path=None, progress=False)
    asyncio.run(run(config))
    return out


def make_plan(data: Path, out: Path, simulator: str | ModelEntry, **options: Any) -> Plan:
    entry = simulator if isinstance(simulator, ModelEntry) else ModelEntry.from_spec(simulator)
    seeds = options.pop("seeds", 3)
    return Plan(
        simulator=entry,
        data=(data,),
        out=out,
        sampling=Sampling(seeds=tuple(range(seeds))),
        resamples=RESAMPLES,
        **options,
    )


@pytest.fixture
def validated(tmp_path: Path) -> Validate:
    """Validate a simulator (a spec, or an entry with its provider) on a data file."""

    def go(
        data: Path,
        simulator: str | ModelEntry,
        providers: Mapping[str, Provider] | None = None,
        **options: Any,
    ) -> SimulatorsReport:
        # A folder per validation (`validated`, then `validated-2`, ...): the replay's run
        # resumes only its own plan.
        made = len(list(tmp_path.glob("validated*")))
        out = tmp_path / ("validated" if not made else f"validated-{made + 1}")
        plan = make_plan(data, out, simulator, **options)
        return asyncio.run(validate(plan, providers))

    return go
