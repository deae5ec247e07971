"""Cues a trivial strategy could pick a reply by, read from a pair's gold alone.

Each cue names, for every pair of a set, the key of the reply it picks ("tie" for a draw, None
where it does not apply). The `preference` task scores them as references beside the models.

- Position cues, which a fair item set must hold at chance: the later reply, the earlier one,
  by distance (the later one when the replies are further apart than the set's median, the
  earlier one when closer: how ratings drift over a conversation), and
  `position_classifier`, a logistic regression on the positions the prompt shows (the turn of
  the earlier reply, where the transcript stops), cross-validated over conversations (each
  pair is predicted by a model fitted on the other folds' conversations);
  `both_positions_classifier` is the same on both replies' turns and their distance, what a
  prompt quoting the earlier reply inside the transcript would show. They apply to pairs
  across turns with a preferred reply.
- Content cues, which people may really follow and a model has to beat: the longer reply,
  and the one with more of a cue the gold keeps (`PairGold.cues_first`, `cues_second`:
  question marks, overlap with the user's message).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

import numpy as np

from attunebench.stats import FloatArray
from attunebench.tasks.pairs import TIE, PairGold

Items = Sequence[tuple[str, PairGold]]
Cue = Callable[[Items], list[str | None]]
FOLDS = 5
RIDGE = 1e-3


def _ordered(gold: PairGold) -> tuple[str, str] | None:
    """(earlier key, later key) of a pair across turns with a preferred reply."""
    if not gold.across_turns or gold.tie or gold.chosen is None:
        return None
    if gold.first_turn < gold.second_turn:
        return gold.first, gold.second
    return gold.second, gold.first


def later(items: Items) -> list[str | None]:
    return [None if (o := _ordered(g)) is None else o[1] for _, g in items]


def earlier(items: Items) -> list[str | None]:
    return [None if (o := _ordered(g)) is None else o[0] for _, g in items]


def _distance(gold: PairGold) -> int:
    return abs(gold.second_turn - gold.first_turn)


def by_distance(items: Items) -> list[str | None]:
    usable = [_distance(g) for _, g in items if _ordered(g) is not None]
    if not usable:
        return [None] * len(items)
    median = float(np.median(usable))
    out: list[str | None] = []
    for _, gold in items:
        found = _ordered(gold)
        out.append(None if found is None else found[_distance(gold) > median])
    return out


def longer(items: Items) -> list[str | None]:
    return [g.longer for _, g in items]


def more(cue: str) -> Cue:
    """The reply with more of a content cue (equal: a tie; the cue not kept: no guess)."""

    def pick(items: Items) -> list[str | None]:
        out: list[str | None] = []
        for _, gold in items:
            first, second = gold.cues_first.get(cue), gold.cues_second.get(cue)
            if first is None or second is None:
                out.append(None)
            else:
                out.append(
                    TIE if first == second else gold.first if first > second else gold.second
                )
        return out

    return pick


def shown_position(gold: PairGold) -> list[float]:
    """What the prompt shows of a pair's position: the earlier reply's turn."""
    early = min(gold.first_turn, gold.second_turn)
    return [1.0, early, float(np.log1p(early))]


def both_positions(gold: PairGold) -> list[float]:
    """Both turns, their distance (and its log) and product."""
    early, late = sorted((gold.first_turn, gold.second_turn))
    distance = late - early
    return [1.0, early, late, distance, float(np.log1p(distance)), early * distance / 10]


def fit_logistic(x: FloatArray, y: FloatArray) -> FloatArray:
    """Ridge-penalised logistic regression by Newton's method (IRLS)."""
    beta = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -30, 30)))
        gradient = x.T @ (y - p) - RIDGE * beta
        hessian = (x * (p * (1 - p))[:, None]).T @ x + RIDGE * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.abs(step).max() < 1e-8:
            break
    return beta


def classifier(features: Callable[[PairGold], list[float]]) -> Cue:
    """Each pair across turns picked by a logistic regression of 'the earlier reply was
    preferred' on its `features`, fitted on the other folds' conversations."""

    def pick(items: Items) -> list[str | None]:
        usable = [i for i, (_, g) in enumerate(items) if _ordered(g) is not None]
        out: list[str | None] = [None] * len(items)
        if not usable:
            return out
        x = np.array([features(items[i][1]) for i in usable], dtype=np.float64)
        x[:, 1:] = (x[:, 1:] - x[:, 1:].mean(axis=0)) / np.maximum(x[:, 1:].std(axis=0), 1e-9)
        orders = [o for i in usable if (o := _ordered(items[i][1])) is not None]
        y = np.array(
            [float(items[i][1].chosen == o[0]) for i, o in zip(usable, orders, strict=True)]
        )
        fold = np.array([zlib.crc32(items[i][0].encode()) % FOLDS for i in usable])
        for k in range(FOLDS):
            test, train = fold == k, fold != k
            if not test.any():
                continue
            if train.sum() < x.shape[1] or np.unique(y[train]).size < 2:
                chance = np.full(int(test.sum()), 0.5)
            else:
                chance = 1.0 / (1.0 + np.exp(-(x[test] @ fit_logistic(x[train], y[train]))))
            for j, p in zip(np.flatnonzero(test).tolist(), chance.tolist(), strict=True):
                out[usable[j]] = orders[j][0] if p > 0.5 else orders[j][1]
        return out

    return pick


position_classifier = classifier(shown_position)
both_positions_classifier = classifier(both_positions)
