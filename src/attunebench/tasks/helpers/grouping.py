"""The trivial references of a task: the answer most usual among train items like the item.

Each groups the items by one thing the prompt shows (nothing: constant; the bin of messages
shown: position-only; a length's quintile: length-only; informed, the last self-report) and
guesses the group's usual answer among the train items; an item whose group no train item is
in is guessed as the constant. Every group is read within the item's corpus part, so the bar a
model must clear already knows which corpus a conversation comes from.
"""

from __future__ import annotations

import statistics
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

import numpy as np

from attunebench.data.schema import Conversation
from attunebench.frozen import Frozen
from attunebench.tasks.base import Gold, Guess, Reference, Scoring, Task
from attunebench.tasks.helpers import history
from attunebench.tasks.helpers.history import ContextMode

# Lower edges of the bins of messages shown, past 0 (ESConv rates every few messages).
SHOWN_EDGES = (4, 7, 10, 13, 17, 21, 27)
LENGTH_BINS = 5
G = TypeVar("G", bound=Gold)
P = TypeVar("P", bound=Frozen)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Grouped(Generic[G]):
    """`usual` learns a group's usual answer from its train golds (`constant`: the group is
    every train item, a median where a mean serves the groups), `guess` an item from it."""

    usual: Callable[[Sequence[G], bool], Any]
    guess: Callable[[Any, G], Guess]


class Shown(NamedTuple):
    """What an item's prompt shows, as the references group by it."""

    position: int
    length: float
    reported: str | None


# Each gold's corpus part and what its group is read from, for a list of golds.
Reading = Callable[[Sequence[G]], list[tuple[str | None, Any]]]


@dataclass(frozen=True, slots=True)
class PartConstants:
    """The constant fitted within each corpus part, and over every train item."""

    parts: dict[str | None, Any]
    pooled: Any

    def guess(self, grouped: Grouped[G], gold: G) -> Guess:
        """The item's part's constant (its pooled one where that says nothing of it)."""
        usual = self.parts.get(gold.part, self.pooled)
        return grouped.guess(usual, gold) or grouped.guess(self.pooled, gold)


def part_constants(grouped: Grouped[G], train: Sequence[G]) -> PartConstants:
    members: dict[str | None, list[G]] = defaultdict(list)
    for gold in train:
        members[gold.part].append(gold)
    parts = {part: grouped.usual(golds, True) for part, golds in members.items()}
    return PartConstants(parts, grouped.usual(train, True))


Constants = Callable[[Sequence[G]], PartConstants]


def shared_constants(grouped: Grouped[G]) -> Constants[G]:
    """`part_constants` made once per train set (the same golds in the same order), for the
    references that share it: a cross-fitting fits every reference of a task on each fold's
    same train items, and each one's fit needs the constants."""
    made: dict[tuple[int, ...], tuple[Sequence[G], PartConstants]] = {}

    def constants(train: Sequence[G]) -> PartConstants:
        key = tuple(map(id, train))
        kept = made.get(key)
        if kept is None:  # the golds are kept with their constants: their ids stay theirs
            kept = made[key] = (train, part_constants(grouped, train))
        return kept[1]

    return constants


def remembered(read: Callable[[Sequence[G]], list[T]]) -> Callable[[Sequence[G]], list[T]]:
    """`read` of each gold made once, for the references that group by it (each reads every
    gold once per fold it is fitted on or guessed in), and read back by the golds' ids in C."""
    made: dict[int, T] = {}
    kept: list[G] = []  # the golds read: their ids stay their own

    def read_all(golds: Sequence[G]) -> list[T]:
        ids = list(map(id, golds))
        if not made.keys() >= set(ids):  # (found in C: most calls read no gold anew)
            new = [gold for gold in golds if id(gold) not in made]
            made.update(zip(map(id, new), read(new), strict=True))
            kept.extend(new)
        return list(map(made.__getitem__, ids))

    return read_all


@dataclass(frozen=True, slots=True)
class GroupFit:
    """A group reference fitted: its length edges (binned), each group's usual answer, and the
    constants."""

    edges: list[float] | None
    usual: dict[Hashable, Any]
    constant: PartConstants


def grouped_reference(
    grouped: Grouped[G], read: Reading[G], constants: Constants[G], binned: bool = False
) -> Reference[G]:
    """A reference guessing each item the usual answer of its group within its corpus part:
    `read` gives each gold's part and what it is grouped by; `binned`: a number, grouped by the
    train items' quintiles of it."""

    def groups(edges: list[float] | None, found: list[tuple[str | None, Any]]) -> list[Any]:
        if edges is None:
            return found
        bins = np.searchsorted(edges, [number for _, number in found], side="left").tolist()
        return list(zip([part for part, _ in found], bins, strict=True))

    def fit(train: Sequence[G]) -> GroupFit:
        found = read(train)
        edges = quintile_edges([number for _, number in found]) if binned else None
        members: dict[Hashable, list[G]] = defaultdict(list)
        for gold, group in zip(train, groups(edges, found), strict=True):
            members[group].append(gold)
        usual = {key: grouped.usual(golds, False) for key, golds in members.items()}
        return GroupFit(edges, usual, constants(train))

    def guess(fitted: GroupFit, golds: Sequence[G]) -> list[Guess]:
        out = []
        for gold, group in zip(golds, groups(fitted.edges, read(golds)), strict=True):
            usual = fitted.usual.get(group)
            found = None if usual is None else grouped.guess(usual, gold)
            out.append(found or fitted.constant.guess(grouped, gold))
        return out

    return Reference(guess, fit)


def constant_reference(grouped: Grouped[G], constants: Constants[G]) -> Reference[G]:
    """The usual answer of the train items of the item's corpus part: a constant per part."""

    def guess(fitted: PartConstants, golds: Sequence[G]) -> list[Guess]:
        return [fitted.guess(grouped, gold) for gold in golds]

    return Reference(guess, constants)


def group_references(
    grouped: Grouped[G], shown: Callable[[G], Shown], context: ContextMode = "blind"
) -> dict[str, Reference[G]]:
    """A task's trivial references, each grouping by one thing the prompt shows (`shown`);
    they share what each gold shows and each train set's constants."""
    constants = shared_constants(grouped)
    shows: Callable[[Sequence[G]], list[Shown]] = remembered(lambda golds: list(map(shown, golds)))

    def reading(field: str) -> Reading[G]:
        return remembered(
            lambda golds: [
                (g.part, getattr(s, field)) for g, s in zip(golds, shows(golds), strict=True)
            ]
        )

    found = {
        "reference/constant": constant_reference(grouped, constants),
        "reference/position-only": grouped_reference(grouped, reading("position"), constants),
        "reference/length-only": grouped_reference(grouped, reading("length"), constants, True),
    }
    if context == "informed":
        found["reference/self-report"] = grouped_reference(grouped, reading("reported"), constants)
    return found


class GroupedScoring(Scoring[G, P]):
    """A scoring whose references are a `Grouped`'s (`grouped`), its items grouped by what the
    gold's `shown` says the prompt shows (`group_references`)."""

    grouped: ClassVar[Grouped[Any]]

    @classmethod
    def check_task(cls, task: type[Task[Any, Any]]) -> None:
        # The references read the gold's `shown` only when the analysis runs: a gold without
        # one would fail there, with an AttributeError, rather than where the task is declared.
        if not callable(getattr(task.gold_type, "shown", None)):
            raise TypeError(
                f"{task.__qualname__}: its gold {task.gold_type.__name__} has no shown(), what"
                f" its prompt shows, which {cls.__name__}'s references group by"
            )

    def references(self, context: ContextMode = "blind") -> dict[str, Reference[G]]:
        gold: Any = self.task.gold_type  # a gold that says what its prompt shows
        return group_references(self.grouped, gold.shown, context)


def shown_bin(visible: int | None, edges: Sequence[int] = SHOWN_EDGES) -> int:
    """The bin of a number of messages shown (-1: not recorded)."""
    return -1 if visible is None else bisect_right(edges, visible)


@lru_cache(maxsize=1 << 16)  # a gold is grouped once per reference and fold: its key made once
def shown_of(visible: int | None, length: float, reported: str | None) -> Shown:
    """What a prompt shows that shows `visible` messages (its bin), `length` characters of
    what the item is about and the `reported` last self-report."""
    return Shown(shown_bin(visible), length, reported)


def quintile_edges(numbers: Sequence[float]) -> list[float]:
    """The inner edges of these numbers' quintiles (none for no numbers)."""
    if not numbers:
        return []
    found = np.asarray(numbers, dtype=np.float64)
    edges: list[float] = np.quantile(found, np.linspace(0, 1, LENGTH_BINS + 1)[1:-1]).tolist()
    return edges


K = TypeVar("K", bound=Hashable)


def usual_numbers(found: Iterable[tuple[K, float]], constant: bool) -> dict[K, float]:
    """Per key, the mean of its numbers (the constant's: the median, the constant an error
    rewards)."""
    by_key: dict[K, list[float]] = defaultdict(list)
    for key, number in found:
        by_key[key].append(number)
    usual = statistics.median if constant else statistics.fmean
    return {key: float(usual(numbers)) for key, numbers in by_key.items()}


def most_common(labels: Iterable[Iterable[str]]) -> str | None:
    """The label most frequent among these items' labels (ties: alphabetical order)."""
    counts = Counter(chain.from_iterable(labels))  # one count, not an update per item
    return min(counts, key=lambda label: (-counts[label], label)) if counts else None


def last_report(conversation: Conversation, before: int) -> str | None:
    """The person's last self-report before turn `before` (its primary label and intensity),
    the self-report reference's key."""
    reports = history.self_reports_before(conversation, before)
    if not reports:
        return None
    state = reports[-1].state
    label = state.primary or next(iter(state.emotions), "")
    return f"{label}|{'' if state.intensity is None else f'{state.intensity:g}'}"
