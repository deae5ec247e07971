"""The simulator (and the supporter it talks with) bound for one validation, on one engine.

A rollout is one seeded draw of what the person might say, so temperature, top-p and seed are
the validation's (`Sampling`); the models file's other parameters still have the last word.
The seed enters the cache key: a rerun repeats no call that came back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from attunebench.data.schema import Conversation, Turn
from attunebench.engine.cache import ResponseCache
from attunebench.engine.caller import Engine
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.person import PERSON, Person
from attunebench.engine.runner import RunConfig, run
from attunebench.engine.scheduler import each_shown
from attunebench.engine.wiring import bind_models, close_models
from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams, Provider
from attunebench.models.modelsfile import ModelEntry
from attunebench.simulators.replay import replay_items, spread
from attunebench.tasks.base import Item, Output, Query, Task

SAMPLED = ("temperature", "top_p", "seed")  # the parameters a rollout sets
R = TypeVar("R")


class Sampling(Frozen):
    """How the simulated person is sampled: the same for every call, but each rollout's seed."""

    temperature: float = 0.7
    top_p: float | None = 0.95
    seeds: tuple[int, ...] = (0, 1, 2)

    def params(self, params: GenerateParams, seed: int) -> GenerateParams:
        return params.model_copy(
            update={"temperature": self.temperature, "top_p": self.top_p, "seed": seed}
        )


def unsampled(entry: ModelEntry) -> ModelEntry:
    """The entry without the sampling it sets, so each call's (the rollout's) is sent."""
    kept = entry.params.model_dump(exclude_unset=True, exclude=set(SAMPLED))
    return entry.model_copy(update={"params": GenerateParams.model_validate(kept)})


def person_name(simulator: ModelEntry, rollout: int) -> str:
    """What the replay's run calls the simulated person in one rollout."""
    return f"{PERSON}/{simulator.name}?seed={rollout}"


def person_entries(simulator: ModelEntry, sampling: Sampling) -> list[ModelEntry]:
    """One `person/` model per rollout (`engine.person`), its sampling the rollout's."""
    kept = unsampled(simulator).params
    return [
        ModelEntry(
            name=person_name(simulator, seed),
            spec=f"{PERSON}/{simulator.spec}",
            params=sampling.params(kept, seed),
            answer=simulator.answer,
            family=simulator.family,
            price=simulator.price,
        )
        for seed in sampling.seeds
    ]


@dataclass(frozen=True)
class Plan:
    """What `simulators validate` is asked to do."""

    simulator: ModelEntry
    data: tuple[Path, ...]
    out: Path
    supporter: ModelEntry | None = None
    runs: tuple[Path, ...] = ()
    limit: int | None = None
    sampling: Sampling = field(default_factory=Sampling)
    exchanges: int = 3  # messages the simulated seeker writes
    per_conversation: int = 6  # items replayed per task, turns continued, messages graded
    # The kinds of the runs' models ranked beside the models under test ("baseline", "simulated").
    include: frozenset[str] = frozenset()
    seed: int = 0  # the tasks' seed and the resampling's
    resamples: int = 2000
    cache_path: Path | None = None
    concurrency: int = 4
    progress: bool = False  # a run's bar on a terminal, for each step


@dataclass(frozen=True)
class Session:
    """One engine over the plan's simulator and supporter; `ask` goes through its cache."""

    engine: Engine
    plan: Plan

    async def ask(self, query: Query, item: Item[Any], rollout: int) -> Output:
        """The simulator's answer, sampled for `rollout` where it writes one (a choice
        question's probabilities are read as the question's parameters ask)."""
        simulator = self.plan.simulator.name
        if query.choice is None or not self.engine.models[simulator].choosing:
            query = replace(query, params=self.plan.sampling.params(query.params, rollout))
        return await self.engine.ask(simulator, query, item, "subject")

    async def replay(
        self,
        tasks: Sequence[Task[Any, Any]],
        data: Path,
        out: Path,
        per_conversation: int | None,
    ) -> None:
        """The tasks' replayed items of the conversations in `data`, asked through the engine
        of every rollout's person into the run directory `out` (read back: `read_replay`).
        Every rollout's role wraps the one simulator the session bound, so a `local/` server
        starts once; run again, the run resumes."""
        plan = self.plan
        entries = person_entries(plan.simulator, plan.sampling)
        config = RunConfig(
            data=data,
            out=out,
            models=tuple(entries),
            concurrency=plan.concurrency,
            cache_path=plan.cache_path,
            progress=plan.progress,
            check_servers=False,  # the session reached the simulator's server already
            include_careless=True,  # the people's own answers, careless or not, are the gold
            items=partial(replay_items, per_conversation=per_conversation),
        )
        bound = self.engine.models[plan.simulator.name].provider
        await run(
            config, providers={e.name: Person(bound, owns=False) for e in entries}, tasks=tasks
        )

    async def each_turn(
        self,
        doing: str,
        conversations: Iterable[Conversation],
        turns_of: Callable[[Conversation], Sequence[Turn]],
        step: Callable[[Session, Conversation, Turn, int], Awaitable[R]],
        generated: bool = True,
    ) -> list[R]:
        """`step` on at most `per_conversation` of each conversation's `turns_of`, spread over
        it, in every rollout, through the engine's scheduler (`each_shown`); a choice question
        on real data only (not `generated`) in the first alone: its answer is the same in each."""
        simulator, seeds = self.plan.simulator.name, self.plan.sampling.seeds
        if not generated and self.engine.models[simulator].choosing:
            seeds = seeds[:1]
        work = [
            (conversation, turn, rollout)
            for conversation in conversations
            for turn in spread(turns_of(conversation), self.plan.per_conversation)
            for rollout in seeds
        ]
        shown = self.plan.progress
        return await each_shown(
            self.engine, simulator, doing, work, lambda u: step(self, *u), progress=shown
        )


@asynccontextmanager
async def open_session(
    plan: Plan, providers: Mapping[str, Provider] | None = None
) -> AsyncIterator[Session]:
    """The plan's models bound (and their servers started) for the session, closed after it;
    `providers` (by model name) replace the ones their entries would make, for tests."""
    supporter = [plan.supporter] if plan.supporter else []
    bound = await bind_models(
        [unsampled(plan.simulator), *supporter],
        concurrency=plan.concurrency,
        overrides=providers or {},
        check=True,
    )
    cache = ResponseCache(plan.cache_path) if plan.cache_path is not None else None
    try:
        yield Session(Engine(bound, cache=cache, ledger=LedgerBook()), plan)
    finally:
        await close_models(bound)
        if cache is not None:
            cache.close()
