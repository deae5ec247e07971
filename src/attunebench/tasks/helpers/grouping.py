"""The trivial references of a task: the answer most usual among train items like the item.

Each groups the items by one thing the prompt shows (nothing: constant; the bin of messages
shown: position-only; a length's quintile: length-only; informed, the last self-report) and
guesses the group's usual answer among the train items; an item whose group no train item is
in is guessed as the constant. Every group is read within the item's corpus part, so the bar a
model must clear already knows which corpus a conversation comes from.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left, bisect_right
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


# How items are grouped: what the keys learn from the train golds (a length's quintile
# edges), and each gold's key given that.
KeyFit = Callable[[Sequence[G]], Any]
KeyOf = Callable[[Any, G], Hashable]


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


def remembered(shown: Callable[[G], Shown]) -> Callable[[G], Shown]:
    """`shown` read once per gold for the references that group by it (each reads every gold
    once per fold it is fitted on or guessed in)."""
    made: dict[int, tuple[G, Shown]] = {}

    def read(gold: G) -> Shown:
        kept = made.get(id(gold))
        if kept is None:  # the gold is kept with what it shows: its id stays its own
            kept = made[id(gold)] = (gold, shown(gold))
        return kept[1]

    return read


@dataclass(frozen=True, slots=True)
class GroupFit:
    """A group reference fitted: its keys, each group's usual answer, and the constants."""

    keys: Any
    usual: dict[Hashable, Any]
    constant: PartConstants


def grouped_reference(
    grouped: Grouped[G], key_fit: KeyFit[G] | None, key_of: KeyOf[G], constants: Constants[G]
) -> Reference[G]:
    """A reference guessing each item the usual answer of its group within its corpus part."""
    # Grouped by what needs no fit, a gold's group is the same in every fold: read once.
    fixed: dict[int, tuple[G, Hashable]] = {}

    def groups(keys: Any, golds: Sequence[G]) -> list[Hashable]:
        if key_fit is not None:
            return [(gold.part, key_of(keys, gold)) for gold in golds]
        for gold in golds:
            if id(gold) not in fixed:  # the gold is kept with its group: its id stays its own
                fixed[id(gold)] = (gold, (gold.part, key_of(keys, gold)))
        return [fixed[id(gold)][1] for gold in golds]

    def fit(train: Sequence[G]) -> GroupFit:
        keys = key_fit(train) if key_fit is not None else None
        members: dict[Hashable, list[G]] = defaultdict(list)
        for gold, group in zip(train, groups(keys, train), strict=True):
            members[group].append(gold)
        usual = {key: grouped.usual(golds, False) for key, golds in members.items()}
        return GroupFit(keys, usual, constants(train))

    def guess(fitted: GroupFit, golds: Sequence[G]) -> list[Guess]:
        out = []
        for gold, group in zip(golds, groups(fitted.keys, golds), strict=True):
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
    shown, constants = remembered(shown), shared_constants(grouped)
    found = {
        "reference/constant": constant_reference(grouped, constants),
        "reference/position-only": grouped_reference(
            grouped, None, lambda _, g: shown(g).position, constants
        ),
        "reference/length-only": grouped_reference(
            grouped,
            lambda train: quintile_edges([shown(g).length for g in train]),
            lambda edges, g: bisect_left(edges, shown(g).length),
            constants,
        ),
    }
    if context == "informed":
        found["reference/self-report"] = grouped_reference(
            grouped, None, lambda _, g: shown(g).reported, constants
        )
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
