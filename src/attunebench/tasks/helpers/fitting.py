"""Fitting on gold out of sample: on a train split, or cross-fitted by conversation
(docs/architecture.md, "Fitted on gold, out of sample").

Cross-fitted metrics are read within each fold and averaged, as cross-validation scores are:
read across folds, a correlation is biased down (a position-only guess scored -0.35 on MultiESC
test's outcome items, 0 within folds). The fitted baselines also learn from the train items'
person-hidden twins where a run asks them (else a baseline's person gap measures a change of
input it was never fitted for).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from attunebench.data.schema import Conversation
from attunebench.models.base import Example
from attunebench.tasks.base import Gold, Guess, Item, Reference, Task
from attunebench.tasks.helpers.twins import DEFAULT_PERSON, PersonOption, person_twins

FOLDS = 5
Fit = Literal["train", "cross-fitted", "none"]
G = TypeVar("G", bound=Gold)


def folds(conversations: Sequence[str], seed: int, count: int = FOLDS) -> list[int]:
    """Each item's fold, that of its conversation: the sorted conversations shuffled by `seed`
    and dealt in turn, so the folds differ by at most one conversation."""
    distinct = sorted(set(conversations))
    order = np.random.default_rng(seed).permutation(len(distinct))
    fold_of = {distinct[i]: n % count for n, i in enumerate(order.tolist())}
    return [fold_of[c] for c in conversations]


@dataclass(frozen=True, slots=True)
class Fitted:
    """A predictor's guesses fitted out of sample, how, and (cross-fitted) each item's fold."""

    guesses: list[Guess]
    fit: Fit
    folds: list[int] | None = None


def cross_fitted(
    reference: Reference[G],
    golds: Sequence[G],
    conversations: Sequence[str],
    seed: int,
    scored: Sequence[G] | None = None,
) -> Fitted:
    """Each item's guess by a fit on the other folds' items; `scored`: the golds to score the
    guesses against, where not those fitted on (a planted study's)."""
    assert reference.fit is not None
    dealt = folds(conversations, seed)
    fold = np.asarray(dealt, dtype=np.int64)
    guessed = golds if scored is None else scored
    held, found = [], []
    for k in np.unique(fold).tolist():
        inside = np.flatnonzero(fold == k)
        fitted = reference.fit(list(map(golds.__getitem__, np.flatnonzero(fold != k).tolist())))
        guesses = reference.guess(fitted, list(map(guessed.__getitem__, inside.tolist())))
        if len(guesses) != len(inside):
            raise ValueError(f"{len(guesses)} guesses for {len(inside)} items")
        held.append(inside)
        found += guesses
    # every fold's guesses put back in the items' order, by one C-level map
    placed = np.concatenate(held) if held else np.zeros(0, dtype=np.int64)  # (no items)
    order = np.argsort(placed, kind="stable").tolist()
    return Fitted(list(map(found.__getitem__, order)), "cross-fitted", dealt)


def out_of_sample(
    reference: Reference[G],
    golds: Sequence[G],
    conversations: Sequence[str],
    train: Sequence[G] | None = None,
    seed: int = 0,
) -> Fitted:
    """Each item's guess, fitted on `train`, else cross-fitted (a rule: not fitted)."""
    if reference.fit is None:
        return Fitted(reference.guess(None, golds), "none")
    if train is not None:
        return Fitted(reference.guess(reference.fit(train), golds), "train")
    return cross_fitted(reference, golds, conversations, seed)


def train_items(
    task: Task[G, Any], conversations: Iterable[Conversation], variant: str | None = None
) -> list[Item[G]]:
    """A train split's items, as the task builds them (with its options): those of one
    `variant` (context mode), or the first context each item is asked in."""
    found: dict[tuple[str, int, str], Item[G]] = {}
    for item in task.items(conversations):
        if variant is None or item.variant == variant:
            found.setdefault((item.conversation.id, item.turn_index, item.item_id), item)
    return list(found.values())


def examples(
    task: Task[Any, Any],
    conversations: Iterable[Conversation],
    person: PersonOption = DEFAULT_PERSON,
) -> list[Example]:
    """A train split's examples for the fitted baselines: each item's query hints (generate
    form, keyed as the engine keys them) with its gold as that query shows it, twins included
    as `person` asks; queries a baseline reads alike give one example."""
    items: Iterable[Item[Any]] = train_items(task, conversations)
    if task.evaluates == "models":
        items = person_twins(items, person)
    out = []
    for item in items:
        gold = item.gold.model_dump(mode="json")
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for query in task.queries(item, "generate"):
            hint = query.hint
            form = hint.form if hint is not None else None
            if hint is None or form is None or not form.gold_answers:
                continue
            hint = dataclasses.replace(
                hint,
                item_key=hint.item_key or f"{item.key}|{query.key}",
                task=hint.task or item.task,
            )
            read = (hint.kind, form.reads(hint))
            if read not in seen:
                seen.add(read)
                out.append(Example(hint, form.shown(hint, gold)))
    return out
