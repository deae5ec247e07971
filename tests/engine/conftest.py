"""Engine test fixtures: a small valid dataset, a recording sleep, and a run helper."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from attunebench.engine import RetryPolicy, RunConfig, RunResult, run
from attunebench.models.base import Provider
from attunebench.models.modelsfile import ModelEntry

sys.path.insert(0, str(Path(__file__).parent))
from echo_task import EchoTask
from engine_harness import RunFn, write_dataset


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "data.jsonl")


@pytest.fixture
def fast_sleep() -> tuple[list[float], Callable[[float], Awaitable[None]]]:
    """A sleep that records how long it was asked to wait, and does not wait."""
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(0)

    return waits, sleep


@pytest.fixture
def run_echo(tmp_path: Path, dataset: Path) -> RunFn:
    """Run the echo task with mock providers given by name; returns the RunResult."""

    async def go(
        providers: dict[str, Provider],
        *,
        out: Path | None = None,
        judges: dict[str, Provider] | None = None,
        entries: dict[str, ModelEntry] | None = None,
        **options: Any,
    ) -> RunResult:
        entries = entries or {}
        judges = judges or {}
        policy = options.pop("policy", RetryPolicy(max_attempts=3))
        sleep = options.pop("sleep", asyncio.sleep)
        config = RunConfig(
            data=options.pop("data", dataset),
            out=out or tmp_path / "run",
            models=tuple(
                entries.get(n) or ModelEntry(name=n, spec=p.spec) for n, p in providers.items()
            ),
            judges=tuple(
                entries.get(n) or ModelEntry(name=n, spec=p.spec) for n, p in judges.items()
            ),
            progress=False,
            **{"cache_path": tmp_path / "cache.sqlite", **options},
        )
        return await run(
            config,
            providers={**providers, **judges},
            tasks=[EchoTask()],
            policy=policy,
            sleep=sleep,
        )

    return go
