"""Which two models a participant talks to, which one is Reply A at each turn, and which reply
the conversation goes on with after a tie.

The least-used ordered pair, swapping places every turn, so position effects cancel within and
across conversations; every draw is seeded from the study seed, so assignments replay exactly.
After a tie the reply kept is drawn, since always keeping Reply A would add a position effect."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass

POSITIONS = ("A", "B")


@dataclass(frozen=True, slots=True)
class Pair:
    first: str
    second: str

    def at_turn(self, index: int) -> dict[str, str]:
        """The model shown in each position at turn `index`."""
        if index % 2 == 0:
            return {"A": self.first, "B": self.second}
        return {"A": self.second, "B": self.first}


def choose_pair(pool: tuple[str, ...], used: Counter[Pair], seed: int) -> Pair:
    """The least-used ordered pair; among equals, the one whose models are least used overall.

    >>> pool = ("m/a", "m/b", "m/c")
    >>> used: Counter[Pair] = Counter()
    >>> picks = []
    >>> for n in range(6):
    ...     pair = choose_pair(pool, used, seed=n)
    ...     used[pair] += 1
    ...     picks.append(pair)
    >>> sorted(used.values())
    [1, 1, 1, 1, 1, 1]
    """
    if len(pool) < 2:
        raise ValueError("a pool needs at least two models")
    per_model: Counter[str] = Counter()
    for pair, count in used.items():
        per_model[pair.first] += count
        per_model[pair.second] += count
    candidates = [Pair(a, b) for a, b in itertools.permutations(pool, 2)]
    best = min((used[p], per_model[p.first] + per_model[p.second]) for p in candidates)
    tied = [p for p in candidates if (used[p], per_model[p.first] + per_model[p.second]) == best]
    return random.Random(seed).choice(tied)


def continuation(seed: int, participant: str, turn: int, choice: str) -> tuple[str, str]:
    """The position the conversation goes on with, and how it was chosen (`pick`, `random`).

    >>> continuation(7, "p1", 0, "B")
    ('B', 'pick')
    >>> continuation(7, "p1", 0, "tie") == continuation(7, "p1", 0, "tie")
    True
    >>> sorted({continuation(7, f"p{n}", 0, "tie")[0] for n in range(20)})
    ['A', 'B']
    """
    if choice in POSITIONS:
        return choice, "pick"
    return random.Random(f"{seed}:{participant}:{turn}").choice(POSITIONS), "random"
