"""What the trivial references group items by: the messages a prompt shows, a length's
quintile, and the most frequent label of each group.

A position-only reference guesses from the bin of the number of messages shown (what the
prompt reveals of where the item sits); a length-only one from the quintile of a length among
the items; a constant from nothing. Each guesses the answer most usual in its group.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

# Lower edges of the bins of messages shown, past 0 (ESConv rates every few messages).
SHOWN_EDGES = (4, 7, 10, 13, 17, 21, 27)
LENGTH_BINS = 5


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
