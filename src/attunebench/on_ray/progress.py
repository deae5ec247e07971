"""What one progress bar over every shard of a `run --ray` run reads.

Each task tells a small Ray actor (`Board`) how many of its shard's items are done and
planned; the driver reads the totals. A retried shard reports afresh: nothing counts twice.
"""

from __future__ import annotations

from typing import Any

from attunebench.on_ray.inbox import ON_HEAD


class _Counts:
    """The actor: (done, planned) of each shard, by its index."""

    def __init__(self) -> None:
        self._shards: dict[int, tuple[int, int]] = {}

    def report(self, index: int, done: int, planned: int) -> None:
        self._shards[index] = (done, planned)

    def totals(self) -> tuple[int, int]:
        return sum(d for d, _ in self._shards.values()), sum(p for _, p in self._shards.values())


class Board:
    """What the tasks report to (`board(index, done, planned)`) and the driver reads."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    @classmethod
    def start(cls, ray: Any) -> Board:
        return cls(ray.remote(num_cpus=0, resources=ON_HEAD)(_Counts).remote())

    def __call__(self, index: int, done: int, planned: int) -> None:
        self._actor.report.remote(index, done, planned)

    def totals(self, ray: Any) -> tuple[int, int]:
        """(items done, items planned) over the shards that have reported."""
        done, planned = ray.get(self._actor.totals.remote(), timeout=10)
        return int(done), int(planned)

    def stop(self, ray: Any) -> None:
        ray.kill(self._actor)
