"""What the trivial references group items by: the messages a prompt shows, a length's
quintile, and the most frequent label of each group.

A position-only reference guesses from the bin of the number of messages shown (what the
prompt reveals of where the item sits); a length-only one from the quintile of a length among
the items; a constant from nothing. Each guesses the answer most usual in its group.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

import numpy as np

from attunebench.tasks.base import Gold, Guess, Reference

# Lower edges of the bins of messages shown, past 0 (ESConv rates every few messages).
SHOWN_EDGES = (4, 7, 10, 13, 17, 21, 27)
LENGTH_BINS = 5
G = TypeVar("G", bound=Gold)
# A task's guess at every item from the group each is in: (items, one key per item) -> guesses.
GroupGuess = Callable[[Sequence[tuple[str, G]], Sequence[Hashable]], list[Guess]]


def group_references(
    guess: GroupGuess[G], position: Callable[[G], int], length: Callable[[G], float]
) -> dict[str, Reference[G]]:
    """The three trivial references of a task, by what each groups the items by: nothing
    (constant), the bin of the messages shown (`position`: that number's bin), and the
    quintile of a length (`length`: the item's)."""
    return {
        "reference/constant": lambda items: guess(items, [0] * len(items)),
        "reference/position-only": lambda items: guess(items, [position(g) for _, g in items]),
        "reference/length-only": lambda items: guess(
            items, quintiles([length(g) for _, g in items])
        ),
    }


def shown_bin(visible: int | None, edges: Sequence[int] = SHOWN_EDGES) -> int:
    """The bin of a number of messages shown (-1: not recorded)."""
    return -1 if visible is None else bisect_right(edges, visible)


def quintiles(numbers: Sequence[float]) -> list[int]:
    """Each number's quintile among these."""
    if not numbers:
        return []
    found = np.asarray(numbers, dtype=np.float64)
    edges = np.quantile(found, np.linspace(0, 1, LENGTH_BINS + 1)[1:-1])
    return [int(b) for b in np.searchsorted(edges, found)]


def most_common_by(keys: Sequence[Hashable], labels: Sequence[Iterable[str]]) -> list[str | None]:
    """Per item, the label most frequent among the items with its key (None: the group has
    none); equal counts go to the label first in alphabetical order."""
    counts: dict[Hashable, Counter[str]] = defaultdict(Counter)
    for key, found in zip(keys, labels, strict=True):
        counts[key].update(found)
    best = {
        key: min(found, key=lambda label: (-found[label], label)) if found else None
        for key, found in counts.items()
    }
    return [best[key] for key in keys]
