"""The trivial references of a task: the answer most usual among train items like the item.

Each groups the items by one thing the prompt shows and guesses an item the answer most usual
in its group among the train items (`tasks.helpers.fitting` chooses them: a train split, or the
other folds): a constant groups by nothing; position-only by the bin of the number of messages
shown; length-only by the quintile of a length, its edges fitted on the train items too; and,
in the informed context, self-report by the person's last self-report the prompt shows. An
item whose group no train item is in, or whose group says nothing of it (no rating on its
scale), is guessed as the constant.

On data pooling several corpus parts (a suite), every group is read within the item's part
(`Gold.part`): the constant is each part's own usual answer among its train items (its mean or
median rating, its majority label), position-only the usual answer at that bin in that part,
and so on; an item of a part no train item is in is guessed from every train item. Which
corpus a conversation comes from says nothing about the person, so the bar a model must clear
knows it already (the headlines are read within part too: `tasks.helpers.adjusted`,
`tasks.helpers.metrics.within_parts`).

A task says what a group's usual answer is and how an item is guessed from it (`Grouped`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np

from attunebench.data.schema import Conversation
from attunebench.tasks.base import Gold, Guess, Reference
from attunebench.tasks.helpers import history
from attunebench.tasks.helpers.history import ContextMode

# Lower edges of the bins of messages shown, past 0 (ESConv rates every few messages).
SHOWN_EDGES = (4, 7, 10, 13, 17, 21, 27)
LENGTH_BINS = 5
G = TypeVar("G", bound=Gold)


@dataclass(frozen=True, slots=True)
class Grouped(Generic[G]):
    """What a task's group references need: `usual` learns a group's usual answer from its
    train golds (`constant`: the group is every train item, whose usual answer may differ,
    as a median where a mean serves the groups; None: nothing to learn from), and `guess`
    guesses an item from the usual answer of its group (None: no guess)."""

    usual: Callable[[Sequence[G], bool], Any]
    guess: Callable[[Any, G], Guess]


class Shown(NamedTuple):
    """What an item's prompt shows, as the references group by it: the bin of the messages
    shown, a length, and the last self-report the informed prompt shows (its key)."""

    position: int
    length: float
    reported: str | None


# How items are grouped: what the keys learn from the train golds (a length's quintile
# edges), and each gold's key given that.
KeyFit = Callable[[Sequence[G]], Any]
KeyOf = Callable[[Any, G], Hashable]


@dataclass(frozen=True, slots=True)
class PartConstants:
    """The constant fitted within each corpus part (its train items' usual answer), and over
    every train item, for an item of a part no train item is in."""

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


@dataclass(frozen=True, slots=True)
class GroupFit:
    """A group reference fitted: what its keys learned, each group's usual answer within its
    corpus part, and the constants, for items of a group no train item is in."""

    keys: Any
    usual: dict[Hashable, Any]
    constant: PartConstants


def grouped_reference(
    grouped: Grouped[G], key_fit: KeyFit[G] | None, key_of: KeyOf[G]
) -> Reference[G]:
    """A reference guessing each item from the usual answer of its group, within its corpus
    part, among the train items."""

    def fit(train: Sequence[G]) -> GroupFit:
        keys = key_fit(train) if key_fit is not None else None
        members: dict[Hashable, list[G]] = defaultdict(list)
        for gold in train:
            members[gold.part, key_of(keys, gold)].append(gold)
        usual = {key: grouped.usual(golds, False) for key, golds in members.items()}
        return GroupFit(keys, usual, part_constants(grouped, train))

    def guess(fitted: GroupFit, golds: Sequence[G]) -> list[Guess]:
        out = []
        for gold in golds:
            usual = fitted.usual.get((gold.part, key_of(fitted.keys, gold)))
            found = None if usual is None else grouped.guess(usual, gold)
            out.append(found or fitted.constant.guess(grouped, gold))
        return out

    return Reference(guess, fit)


def constant_reference(grouped: Grouped[G]) -> Reference[G]:
    """The usual answer of the train items of the item's corpus part, guessed everywhere in
    it: a constant per part (one constant where the data has one part)."""

    def fit(train: Sequence[G]) -> PartConstants:
        return part_constants(grouped, train)

    def guess(fitted: PartConstants, golds: Sequence[G]) -> list[Guess]:
        return [fitted.guess(grouped, gold) for gold in golds]

    return Reference(guess, fit)


def group_references(
    grouped: Grouped[G], shown: Callable[[G], Shown], context: ContextMode = "blind"
) -> dict[str, Reference[G]]:
    """A task's trivial references, by what each groups the items by of what their prompt
    shows (`shown`): nothing (constant), the bin of the messages shown, the quintile of the
    length among the train items and, in the informed context, the last self-report."""
    found = {
        "reference/constant": constant_reference(grouped),
        "reference/position-only": grouped_reference(grouped, None, lambda _, g: shown(g).position),
        "reference/length-only": grouped_reference(
            grouped,
            lambda train: quintile_edges([shown(g).length for g in train]),
            lambda edges, g: bisect_left(edges, shown(g).length),
        ),
    }
    if context == "informed":
        found["reference/self-report"] = grouped_reference(
            grouped, None, lambda _, g: shown(g).reported
        )
    return found


def shown_bin(visible: int | None, edges: Sequence[int] = SHOWN_EDGES) -> int:
    """The bin of a number of messages shown (-1: not recorded)."""
    return -1 if visible is None else bisect_right(edges, visible)


def quintile_edges(numbers: Sequence[float]) -> list[float]:
    """The inner edges of these numbers' quintiles (none for no numbers)."""
    if not numbers:
        return []
    found = np.asarray(numbers, dtype=np.float64)
    edges: list[float] = np.quantile(found, np.linspace(0, 1, LENGTH_BINS + 1)[1:-1]).tolist()
    return edges


def most_common(labels: Iterable[Iterable[str]]) -> str | None:
    """The label most frequent among these items' labels (None: they have none); equal counts
    go to the label first in alphabetical order."""
    counts = Counter(chain.from_iterable(labels))  # one count, not an update per item
    return min(counts, key=lambda label: (-counts[label], label)) if counts else None


def last_report(conversation: Conversation, before: int) -> str | None:
    """The person's last self-report before turn `before`, as the informed prompt shows it:
    its primary label and intensity (the self-report reference's key); None where the prompt
    shows none."""
    reports = history.self_reports_before(conversation, before)
    if not reports:
        return None
    state = reports[-1].state
    label = state.primary or next(iter(state.emotions), "")
    return f"{label}|{'' if state.intensity is None else f'{state.intensity:g}'}"
