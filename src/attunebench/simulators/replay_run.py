"""The replay as an ordinary run of the engine (`DIR/replay/`), read back as any run is.

Each rollout is one model of the run, `person/MODEL?seed=S` (`engine.person`), sampled as the
validation samples the person (`Sampling`); every rollout's role wraps the one simulator the
session bound, so a `local/` server starts once. `attunebench report DIR/replay` reads it, its
rollouts together as one model (`analysis.comparisons.rollouts`). Run again, it resumes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from attunebench.analysis.comparisons.rollouts import pooled
from attunebench.analysis.loading import load_runs
from attunebench.data.schema import Conversation
from attunebench.engine import RunConfig, run
from attunebench.engine.person import PERSON, Person
from attunebench.models.base import GenerateParams
from attunebench.models.modelsfile import ModelEntry
from attunebench.records import ItemRecord
from attunebench.simulators.replay import ROLLOUT, Replayed, replay_items
from attunebench.simulators.session import SAMPLED, Sampling, Session
from attunebench.tasks.base import Item, Task

REPLAY_RUN = "replay"  # the run directory's name inside the validation folder


def person_name(simulator: ModelEntry, rollout: int) -> str:
    """What the run calls the simulated person in one rollout."""
    return f"{PERSON}/{simulator.name}?seed={rollout}"


def person_entries(simulator: ModelEntry, sampling: Sampling) -> list[ModelEntry]:
    """One `person/` model per rollout, its sampling the rollout's."""
    kept = simulator.params.model_dump(exclude_unset=True, exclude=set(SAMPLED))
    return [
        ModelEntry(
            name=person_name(simulator, seed),
            spec=f"{PERSON}/{simulator.spec}",
            params=GenerateParams.model_validate(
                {**kept, "temperature": sampling.temperature, "top_p": sampling.top_p, "seed": seed}
            ),
            answer=simulator.answer,
            family=simulator.family,
            price=simulator.price,
        )
        for seed in sampling.seeds
    ]


async def run_replay(
    session: Session,
    tasks: Sequence[Task[Any, Any]],
    data: Path,
    out: Path,
    per_conversation: int | None,
) -> None:
    """The tasks' replayed items of the conversations in `data`, asked of every rollout's
    person through the engine, into the run directory `out`."""
    plan = session.plan
    bound = session.engine.models[plan.simulator.name].provider
    entries = person_entries(plan.simulator, plan.sampling)

    def chosen(task: Task[Any, Any], conversations: Sequence[Conversation]) -> Iterable[Item[Any]]:
        return replay_items(task, conversations, per_conversation)

    config = RunConfig(
        data=data,
        out=out,
        models=tuple(entries),
        concurrency=plan.concurrency,
        cache_path=plan.cache_path,
        progress=plan.progress,
        check_servers=False,  # the session reached the simulator's server already
        include_careless=True,  # the people's own answers, careless or not, are the gold
        items=chosen,
    )
    roles = {entry.name: Person(bound, owns=False) for entry in entries}
    await run(config, providers=roles, tasks=tasks)


def read_replay(
    folder: Path,
    tasks: Sequence[Task[Any, Any]],
    conversations: Sequence[Conversation],
    per_conversation: int | None,
) -> list[Replayed]:
    """Each task's replay as the run directory holds it: its items and every rollout's records,
    the rollout's seed in each record's `meta`."""
    runs = load_runs([folder])
    seeds = {m.name or m.spec: int(m.params["seed"]) for m in runs.runs[0].info.models}
    by_task: dict[str, list[ItemRecord]] = {}
    for record in pooled(runs.records, seeds):  # a choice answer once (module docstring)
        found = record.model_copy(update={"meta": {**record.meta, ROLLOUT: seeds[record.model]}})
        by_task.setdefault(record.task, []).append(found)
    replayed = []
    for task in tasks:
        if records := by_task.get(task.name):
            items = replay_items(task, conversations, per_conversation)
            replayed.append(Replayed(task, tuple(items), tuple(records)))
    return replayed
