"""Slow set-up before the first call (a knn baseline embedding its train split): each model's
`prepare`, awaited once with the hint kinds the plan still asks it, said on the progress bar
instead of a frozen ETA.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from attunebench.answerform import HintKind
from attunebench.engine.caller import BoundModel
from attunebench.engine.progress import RunProgress
from attunebench.engine.scheduler import Unit
from attunebench.models.base import Preparation


def asked_kinds(units: Sequence[Unit], judges: Sequence[str]) -> dict[str, frozenset[HintKind]]:
    """The hint kinds each model (subject or judge) will be asked in `units`."""
    asked: dict[str, set[HintKind]] = {}
    for unit in units:
        for task, _ in unit.work:
            asked.setdefault(unit.model, set()).update(form.kind for form in task.subject_forms)
            for judge in judges if task.judge_forms else ():
                asked.setdefault(judge, set()).update(form.kind for form in task.judge_forms)
    return {model: frozenset(kinds) for model, kinds in asked.items()}


async def prepare_models(
    models: Mapping[str, BoundModel],
    asked: Mapping[str, frozenset[HintKind]],
    cache_dir: Path | None,
    bar: RunProgress,
) -> None:
    """Await each asked model's `prepare` in turn (a provider shared by two names, once)."""
    prepared: set[int] = set()
    for name, kinds in asked.items():
        provider = models[name].provider
        if id(provider) in prepared:
            continue
        prepared.add(id(provider))
        doing = ""

        def report(message: str, spec: str = provider.spec) -> None:
            nonlocal doing
            doing = message
            bar.describe(f"preparing {spec}: {message}")

        started = time.perf_counter()
        try:
            await provider.prepare(Preparation(kinds, cache_dir, report))
            bar.prepared(name, time.perf_counter() - started)
        except asyncio.CancelledError:
            if doing:
                bar.note(f"interrupted: waiting for {provider.spec} to stop {doing} ...")
            raise
        finally:
            bar.describe("")
