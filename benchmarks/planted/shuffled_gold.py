"""A planted study of the references: on gold shuffled across conversations, nothing a
reference reads predicts the answer, so a reference fitted out of sample scores chance.

Each shuffle gives every item the answer of another item, drawn by a random permutation of
all items (so across conversations), and keeps what the item's prompt shows: its position,
lengths and cues (`with_answer_of`). Per reference of the task, over the shuffles:

- `mean`: its mean headline, fitted and read as the report does (cross-fitted by
  conversation, a correlation read within the folds; a rule as it is);
- `chance`: the mean headline of the same fits scored against a second, independent shuffle:
  what guesses that know nothing of the answers score on this measure (0 for a correlation,
  a half for a pick, for macro-F1 whatever the guesses' own label frequencies give);
- `in_sample`: the mean headline fitted on the very items it guesses, as references were
  fitted before (None for a rule): above chance wherever a fit can follow noise, as
  length-only's quintile means do.

`benchmarks/validity.py` prints it for real corpora (`references_on_shuffled_gold`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attunebench.analysis.references.predictors import evaluated, guessed_views
from attunebench.records import ItemRecord
from attunebench.stats import Weights
from attunebench.tasks.base import Gold, Guess, Item, Task, View
from attunebench.tasks.helpers.fitting import Fitted, cross_fitted, out_of_sample
from attunebench.tasks.helpers.metrics import Metric
from attunebench.tasks.helpers.pairs import PairGold


@dataclass(frozen=True)
class ShuffledReference:
    """One reference's mean headline over the shuffles (see the module docstring)."""

    mean: float | None
    chance: float | None
    in_sample: float | None


def item_views(items: Sequence[Item[Any]]) -> list[View[Any, Any]]:
    """Each item as a view with no prediction, whose gold the references read."""
    return [
        View(
            ItemRecord(
                task=item.task,
                model="items",
                conversation_id=item.conversation.id,
                turn_index=item.turn_index,
                item_id=item.item_id,
                variant=item.variant,
                status="failed",
            ),
            item.gold,
            None,
        )
        for item in items
    ]


def headline(
    metric: Metric, views: Sequence[View[Any, Any]], golds: Sequence[Gold], fitted: Fitted
) -> float | None:
    """The headline of a reference's guesses at these items (their golds as given), read as
    the report reads it: within each fold where cross-fitted."""
    shown: list[View[Any, Any]] = [
        View(view.record, gold, None) for view, gold in zip(views, golds, strict=True)
    ]
    guessed, kept = guessed_views(shown, fitted.guesses)
    if not guessed:
        return None
    folds = None if fitted.folds is None else np.asarray(fitted.folds)[kept]
    point = evaluated(metric, metric.values(guessed), Weights.ones(len(guessed)), folds)[0]
    return None if np.isnan(point) else float(point)


def with_answer_of(gold: Gold, other: Gold) -> Gold:
    """This item's position, lengths and cues with another item's answer (its `answer_fields`);
    a pair's choice moved to the reply in the same place (the first in the data, or the
    second)."""
    update = {name: getattr(other, name) for name in gold.answer_fields}
    if isinstance(gold, PairGold) and isinstance(other, PairGold):
        same_place = gold.first if other.chosen == other.first else gold.second
        update["chosen"] = None if other.chosen is None else same_place
    return gold.model_copy(update=update)


def shuffled(golds: Sequence[Gold], rng: np.random.Generator) -> list[Gold]:
    """Each gold with the answer of another item, drawn by a random permutation."""
    order = rng.permutation(len(golds)).tolist()
    return [with_answer_of(gold, golds[j]) for gold, j in zip(golds, order, strict=True)]


def _mean(values: Sequence[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return float(np.mean(found)) if found else None


def references_on_shuffled_gold(
    task: Task[Any, Any], items: Sequence[Item[Any]], shuffles: int = 200, seed: int = 0
) -> dict[str, ShuffledReference]:
    """Per reference of the task (blind), its mean headline over `shuffles` shuffles of these
    items' gold, the chance level and the in-sample fit's (see the module docstring)."""
    metric = task.scoring.metric()
    views = item_views(items)
    golds = [item.gold for item in items]
    ids = [item.conversation.id for item in items]
    rng = np.random.default_rng(seed)
    found: dict[str, list[list[float | None]]] = {}
    for draw in range(shuffles):
        fitted_on, scored_on = shuffled(golds, rng), shuffled(golds, rng)
        for name, reference in task.scoring.references().items():
            kept = found.setdefault(name, [[], [], []])
            out = out_of_sample(reference, fitted_on, ids, seed=draw)
            kept[0].append(headline(metric, views, fitted_on, out))
            if reference.fit is None:
                rule = Fitted(reference.guess(None, scored_on), "none")
                kept[1].append(headline(metric, views, scored_on, rule))
                continue
            chance = cross_fitted(reference, fitted_on, ids, draw, scored=scored_on)
            kept[1].append(headline(metric, views, scored_on, chance))
            own: list[Guess] = reference.guess(reference.fit(fitted_on), fitted_on)
            kept[2].append(headline(metric, views, fitted_on, Fitted(own, "train")))
    return {
        name: ShuffledReference(_mean(mean), _mean(chance), _mean(own))
        for name, (mean, chance, own) in found.items()
    }
