"""What a `run --ray` run's shards tell their driver as they go, and wait for it to keep.

A shard posts a `Letter` (its ledger, and an answer's cache row) before each call goes out and
after each answer, to a small async actor. The driver collects what arrived, writes it to disk,
and only then tells the actor it is kept: the shard goes on only after that. A shard whose
driver stopped (closed the inbox) or died (the actor died with it) makes no further call.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

COLLECT_WAIT_S = 0.05  # how long the driver's collect waits for a letter when none is there
# The actor lives on the head node, the one node whose loss ends the cluster anyway: a lost
# worker node must not take the inbox (and so every shard) with it.
ON_HEAD = {"node:__internal_head__": 0.001}


@dataclass(frozen=True)
class Letter:
    """One shard attempt's news: its ledger as it stands (JSON), and answers to cache. `seq`
    orders a try's letters as they were written (an async actor may run posts out of order):
    the driver keeps the ledger of the highest."""

    shard: int
    attempt: int
    seq: int
    ledger: dict[str, Any]
    rows: list[tuple[str, str]] = field(default_factory=list)  # (cache key, cache value)


class _Inbox:
    """The actor: letters kept in order of arrival, each poster waiting for the driver."""

    def __init__(self) -> None:
        self._letters: list[tuple[int, Letter]] = []
        self._posters: dict[int, asyncio.Future[bool]] = {}
        self._arrived = asyncio.Event()
        self._count = 0
        self._closed = False

    async def post(self, letter: Letter, sending: bool) -> bool:
        """Wait until the driver has kept `letter`; False, at once and unkept, for a call
        about to go out once the driver has closed the inbox (the run is stopping)."""
        if sending and self._closed:
            return False
        self._count += 1
        number = self._count
        waiting: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._posters[number] = waiting
        self._letters.append((number, letter))
        self._arrived.set()
        return await waiting

    async def collect(self, wait_s: float) -> list[tuple[int, Letter]]:
        """The letters that arrived since the last collect, waiting up to `wait_s` for one."""
        if not self._letters:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), wait_s)
        self._arrived.clear()
        taken, self._letters = self._letters, []
        return taken

    def kept(self, numbers: list[int]) -> None:
        for number in numbers:
            waiting = self._posters.pop(number, None)
            if waiting is not None and not waiting.done():
                waiting.set_result(True)

    def close(self) -> None:
        self._closed = True


class Inbox:
    """The driver's side and the shards' side of the actor (its handle travels with them)."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    @classmethod
    def start(cls, ray: Any) -> Inbox:
        actor = ray.remote(num_cpus=0, max_concurrency=10_000, resources=ON_HEAD)(_Inbox)
        return cls(actor.remote())

    async def post(self, letter: Letter, *, sending: bool) -> bool:
        """(A shard) Wait until the driver has kept `letter`; see `_Inbox.post`."""
        return bool(await self._actor.post.remote(letter, sending))

    def collect(self, ray: Any, wait_s: float = COLLECT_WAIT_S) -> list[tuple[int, Letter]]:
        """(The driver) What arrived, each letter with its number for `kept`."""
        letters: list[tuple[int, Letter]] = ray.get(self._actor.collect.remote(wait_s))
        return letters

    def kept(self, numbers: list[int]) -> None:
        if numbers:
            self._actor.kept.remote(numbers)

    def close(self, ray: Any) -> None:
        """(The driver) No call goes out any more; answers still arriving are kept."""
        ray.get(self._actor.close.remote(), timeout=10)

    def stop(self, ray: Any) -> None:
        ray.kill(self._actor)
