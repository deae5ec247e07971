"""The simulator (and the supporter it talks with) bound for one validation: one engine, one
cache, one ledger, and the sampling every rollout is asked with.

A rollout is one seeded draw of what the person might say, so temperature, top-p and seed are
the validation's (`Sampling`); the models file's other parameters still have the last word.
The seed enters the cache key: a rerun repeats no call that came back. A question whose every
input is real data, answered in choice mode, is asked once (`rollouts_for`).
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from attunebench.data.schema import Conversation, Turn
from attunebench.engine.cache import ResponseCache
from attunebench.engine.caller import Engine
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.scheduler import each_shown
from attunebench.engine.wiring import bind_models, close_models
from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams
from attunebench.models.modelsfile import ModelEntry
from attunebench.simulators.replay import spread
from attunebench.tasks.base import Item, Output, Query

SAMPLED = ("temperature", "top_p", "seed")  # the parameters a rollout sets
T = TypeVar("T")
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


@dataclass
class Session:
    """One engine over the simulator and the supporter; `ask` goes through its cache."""

    engine: Engine
    simulator: str
    supporter: str | None
    sampling: Sampling
    concurrency: int
    progress: bool = False
    cache_path: Path | None = None  # the replay's run asks through the same cache

    @property
    def choosing(self) -> bool:
        """Whether the simulator answers choice questions by option probabilities."""
        return self.engine.models[self.simulator].choosing

    def rollouts_for(self, generated: bool) -> tuple[int, ...]:
        """The rollouts a question is asked in: every seed, or the first alone for a choice
        question on real data only (its answer is the same in every rollout)."""
        return self.sampling.seeds if generated or not self.choosing else self.sampling.seeds[:1]

    async def ask(self, query: Query, item: Item[Any], rollout: int) -> Output:
        """The simulator's answer, sampled for `rollout` where it writes one (a choice
        question's probabilities are read as the question's parameters ask)."""
        if query.choice is None or not self.choosing:
            query = replace(query, params=self.sampling.params(query.params, rollout))
        return await self.engine.ask(self.simulator, query, item, "subject")

    async def support(self, query: Query, item: Item[Any]) -> Output:
        """The supporter's reply, with its own parameters."""
        assert self.supporter is not None
        return await self.engine.ask(self.supporter, query, item, "subject")

    async def each(
        self, doing: str, work: Sequence[T], step: Callable[[T], Awaitable[R]]
    ) -> list[R]:
        """`step` over the work, through the engine's scheduler (`each_shown`)."""
        return await each_shown(
            self.engine, self.simulator, doing, work, step, progress=self.progress
        )

    async def each_turn(
        self,
        doing: str,
        conversations: Iterable[Conversation],
        turns_of: Callable[[Conversation], Sequence[Turn]],
        per_conversation: int,
        step: Callable[[Session, Conversation, Turn, int], Awaitable[R]],
        generated: bool = True,
    ) -> list[R]:
        """`step` on at most `per_conversation` of each conversation's `turns_of`, spread over
        it, in every rollout such a question is asked in (`rollouts_for`)."""
        work = [
            (conversation, turn, rollout)
            for conversation in conversations
            for turn in spread(turns_of(conversation), per_conversation)
            for rollout in self.rollouts_for(generated)
        ]
        return await self.each(doing, work, lambda unit: step(self, *unit))


@asynccontextmanager
async def open_session(
    simulator: ModelEntry,
    supporter: ModelEntry | None,
    sampling: Sampling,
    *,
    cache_path: Path | None,
    concurrency: int = 4,
    providers: dict[str, Any] | None = None,
    progress: bool = False,
) -> AsyncIterator[Session]:
    """The models bound (and their servers started) for the session, closed after it."""
    entries: Sequence[ModelEntry] = [unsampled(simulator), *([supporter] if supporter else [])]
    bound = await bind_models(
        entries, concurrency=concurrency, overrides=providers or {}, check=True
    )
    cache = ResponseCache(cache_path) if cache_path is not None else None
    engine = Engine(bound, cache=cache, ledger=LedgerBook(), rng=random.Random(0))
    try:
        yield Session(
            engine,
            simulator.name,
            supporter.name if supporter else None,
            sampling,
            concurrency,
            progress,
            cache_path,
        )
    finally:
        await close_models(bound)
        if cache is not None:
            cache.close()
