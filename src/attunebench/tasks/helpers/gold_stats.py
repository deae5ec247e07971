"""How many items carry each registered task's gold, and who gave it: what `data stats` shows.

Every task is asked its items (`Task.items`) and its own counts (`Task.gold_counts`), each kind
of gold with the fields whose provenance says who gave it. Nothing here names a task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attunebench.data.schema import Conversation, Source
from attunebench.data.stats import DatasetStats

if TYPE_CHECKING:
    from attunebench.tasks.base import Task

NOT_DECLARED = "not declared"

# A count, or counts by name (an outcome survey's numeric answers, by question).
Count = int | dict[str, int]


@dataclass(frozen=True, slots=True)
class GoldCounts:
    """A task's own counts of its gold (`counts`, in `data stats --json`'s order), and its kinds
    of gold item, each with its items and the fields whose provenance says who gave them."""

    counts: Mapping[str, int | Mapping[str, int]] = field(default_factory=dict)
    kinds: Mapping[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)


def given_by(source: Source, fields: Sequence[str]) -> str:
    """Who gave gold read from these fields: the first provenance the source declares."""
    declared = (source.provenance.get(name) for name in fields)
    return next((who for who in declared if who is not None), NOT_DECLARED)


def _add(total: dict[str, Any], counts: Mapping[str, int | Mapping[str, int]]) -> None:
    for name, count in counts.items():
        if isinstance(count, Mapping):
            total.setdefault(name, Counter()).update(count)
        else:
            total[name] = total.get(name, 0) + count


class GoldStats(DatasetStats):
    """A dataset's stats with each registered task's gold: the output of `data stats --json`."""

    gold: dict[str, dict[str, Count]]
    """Each task's own counts of its gold, and its items (`items`, as `Task.items` makes them
    with the task's default options)."""
    given_by: dict[str, dict[str, int]]
    """Each kind of gold item (emotion, behavior, ...) by who gave it, from the provenance."""


@dataclass(slots=True)
class TaskGold:
    """Counts each task's gold conversation by conversation; `items` and `items_given` (who
    gave their gold, by `gold_fields`) are the table `data stats` prints."""

    tasks: Sequence[Task[Any, Any]]
    counts: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)
    items: Counter[str] = field(default_factory=Counter)
    items_given: dict[str, Counter[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Every task's counts on no conversation: each count at zero, in the task's order.
        for task in self.tasks:
            _add(self.counts.setdefault(task.name, {}), task.gold_counts([]).counts)

    def add(self, conversation: Conversation) -> None:
        source = conversation.source
        for task in self.tasks:
            found = sum(1 for _ in task.items([conversation]))
            self.items[task.name] += found
            if found:
                who = given_by(source, task.gold_fields)
                self.items_given.setdefault(task.name, Counter())[who] += found
            own = task.gold_counts([conversation])
            _add(self.counts[task.name], own.counts)
            kinds = own.kinds or {task.name: (found, task.gold_fields)}
            for kind, (count, fields) in kinds.items():
                if count:
                    self.by_kind.setdefault(kind, Counter())[given_by(source, fields)] += count

    def gold(self) -> dict[str, dict[str, Count]]:
        def frozen(count: int | Counter[str]) -> Count:
            return count if isinstance(count, int) else dict(sorted(count.items()))

        return {
            task.name: {
                **{name: frozen(count) for name, count in self.counts[task.name].items()},
                "items": self.items[task.name],
            }
            for task in self.tasks
        }

    def stats(self, dataset: DatasetStats) -> GoldStats:
        given = {kind: dict(self.by_kind[kind].most_common()) for kind in sorted(self.by_kind)}
        return GoldStats(**dict(dataset), gold=self.gold(), given_by=given)
