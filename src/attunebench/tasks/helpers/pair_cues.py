"""Cues a trivial strategy could pick a reply by, read from a pair's gold alone, fitted on train
pairs (`tasks.helpers.fitting`): position cues a fair item set must hold at chance (the later or
earlier reply, by distance, and logistic classifiers of the positions), and content cues people
may really follow (the longer reply, more questions, more overlap with the user's words).

The classifiers have no intercept: a fitted intercept leans away from the pairs it guesses
(their train pairs are the rest of a balanced set), which put the cross-fitted classifier at
0.47 on ESConv pairs whose gold was shuffled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attunebench.stats import FloatArray, ridge_logistic
from attunebench.tasks.helpers.pairs import TIE, PairGold

Golds = Sequence[PairGold]
RIDGE = 1e-3


@dataclass(frozen=True, slots=True)
class Cue:
    """A cue's pick at each pair, from what it fitted on train pairs (`fit`; None: a rule)."""

    pick: Callable[[Any, Golds], list[str | None]]
    fit: Callable[[Golds], Any] | None = None


def _ordered(gold: PairGold) -> tuple[str, str] | None:
    """(earlier key, later key) of a pair across turns with a preferred reply."""
    if not gold.across_turns or gold.tie or gold.chosen is None:
        return None
    if gold.first_turn < gold.second_turn:
        return gold.first, gold.second
    return gold.second, gold.first


later = Cue(lambda _, golds: [None if (o := _ordered(g)) is None else o[1] for g in golds])
earlier = Cue(lambda _, golds: [None if (o := _ordered(g)) is None else o[0] for g in golds])


def _distance(gold: PairGold) -> int:
    return abs(gold.second_turn - gold.first_turn)


def _median_distance(train: Golds) -> float | None:
    usable = [_distance(g) for g in train if _ordered(g) is not None]
    return float(np.median(usable)) if usable else None


def _by_distance(median: float | None, golds: Golds) -> list[str | None]:
    out: list[str | None] = []
    for gold in golds:
        found = _ordered(gold)
        out.append(None if found is None or median is None else found[_distance(gold) > median])
    return out


by_distance = Cue(_by_distance, _median_distance)
longer = Cue(lambda _, golds: [g.longer for g in golds])


def more(cue: str) -> Cue:
    """The reply with more of a content cue (equal: a tie; the cue not kept: no guess)."""

    def pick(_: Any, golds: Golds) -> list[str | None]:
        out: list[str | None] = []
        for gold in golds:
            first, second = gold.cues_first.get(cue), gold.cues_second.get(cue)
            if first is None or second is None:
                out.append(None)
            else:
                out.append(
                    TIE if first == second else gold.first if first > second else gold.second
                )
        return out

    return Cue(pick)


def shown_position(gold: PairGold) -> list[float]:
    """What the prompt shows of a pair's position: the earlier reply's turn."""
    early = min(gold.first_turn, gold.second_turn)
    return [early, float(np.log1p(early))]


def both_positions(gold: PairGold) -> list[float]:
    """Both turns, their distance (and its log) and product."""
    early, late = sorted((gold.first_turn, gold.second_turn))
    distance = late - early
    return [early, late, distance, float(np.log1p(distance)), early * distance / 10]


@dataclass(frozen=True, slots=True)
class Logistic:
    """A fitted classifier: the train features' means and spreads, and the weights on the
    features so standardised."""

    mean: FloatArray
    spread: FloatArray
    beta: FloatArray

    def earlier_wins(self, x: FloatArray) -> list[bool]:
        """Per pair (its features), whether the earlier reply is more likely preferred."""
        score = ((x - self.mean) / self.spread) @ self.beta
        return [bool(value > 0) for value in score.tolist()]


def classifier(features: Callable[[PairGold], list[float]]) -> Cue:
    """Each pair across turns picked by a logistic regression, with no intercept, of 'the
    earlier reply was preferred' on its standardised `features`, fitted on the train pairs (no
    guess where they were too few, or all one way)."""

    def fit(train: Golds) -> Logistic | None:
        usable = [(g, o) for g in train if (o := _ordered(g)) is not None]
        x = np.array([features(g) for g, _ in usable], dtype=np.float64)
        y = np.array([float(g.chosen == o[0]) for g, o in usable])
        if len(usable) <= x.shape[-1] or np.unique(y).size < 2:
            return None
        mean, spread = x.mean(axis=0), np.maximum(x.std(axis=0), 1e-9)
        return Logistic(mean, spread, ridge_logistic((x - mean) / spread, y, RIDGE))

    def pick(model: Logistic | None, golds: Golds) -> list[str | None]:
        out: list[str | None] = [None] * len(golds)
        usable = [(i, o) for i, g in enumerate(golds) if (o := _ordered(g)) is not None]
        if model is None or not usable:
            return out
        x = np.array([features(golds[i]) for i, _ in usable], dtype=np.float64)
        for (i, order), earlier_wins in zip(usable, model.earlier_wins(x), strict=True):
            out[i] = order[0] if earlier_wins else order[1]
        return out

    return Cue(pick, fit)


position_classifier = classifier(shown_position)
both_positions_classifier = classifier(both_positions)
