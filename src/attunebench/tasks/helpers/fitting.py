"""Fitting on gold out of sample: on a train split, or cross-fitted by conversation.

Whatever is fitted on the participants' answers (a reference's usual answer per group, a
classifier's weights) is fitted on items other than those it guesses, so that a bar the
models must clear is never set by a predictor that saw the answers:

- with a train split (`report --train FILE`, or a suite's train split), on that split's items,
  built by the task itself (`train_items`): `fit` is `train`;
- otherwise cross-fitted by conversation (`cross_fitted`): the evaluated conversations are
  dealt into `FOLDS` folds by a seeded shuffle, and each fold's items are guessed by a fit on
  the other folds' (`fit` is `cross-fitted`), so items of one conversation never inform each
  other's guesses. Every metric of such guesses is then read within each fold and averaged
  over the folds, each weighted by its items, as cross-validation scores are: read across
  folds it would compare fits that differ by what each left out, and each fold's fit leans
  away from the fold it guesses (its train items are the rest of a fixed whole). A
  correlation read so is biased down: a position-only guess scored -0.35 on MultiESC test's
  outcome items, where read within folds it scores its 0 by construction. (A mean, such as an
  accuracy, is the same either way; a macro-F1 within a fold counts the labels present there,
  so a constant's is a little higher than over all items: 0.047 against 0.033 on open-v1's
  emotion items);
- a rule that fits nothing ("the longer reply") guesses every item as it is (`fit` is `none`).

A fit that learned nothing for an item (a train split without its scale, say) makes no guess
there, and the item is left out of that predictor's numbers.

The fitted baselines learn from the same train items (`examples`): each item's queries as a
model reads them (their hints) with the item's gold, so a baseline reads exactly what a model
reads and the task reads its gold once. A run that asks person-hidden twins (`tasks.helpers.twins`)
teaches them the train items' twins too, and a twin is answered from those alone: fitted on
the person's words and then asked without them, a baseline's person gap would measure the
change of input it was never fitted for, not what the person's words are worth (on MultiESC,
from -0.086 to +0.049 against a fit with the person hidden in training too).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from attunebench.data.schema import Conversation
from attunebench.models.hints import Example
from attunebench.tasks.base import Gold, Guess, Item, Reference, Task
from attunebench.tasks.helpers.twins import DEFAULT_PERSON, PersonOption, person_twins

FOLDS = 5
Fit = Literal["train", "cross-fitted", "none"]
G = TypeVar("G", bound=Gold)


def folds(conversations: Sequence[str], seed: int, count: int = FOLDS) -> list[int]:
    """Each item's fold, that of its conversation: the distinct conversations, sorted, are
    shuffled by `seed` and dealt in turn into `count` folds, so the folds differ by at most one
    conversation and the same seed deals the same folds."""
    distinct = sorted(set(conversations))
    order = np.random.default_rng(seed).permutation(len(distinct))
    fold_of = {distinct[i]: n % count for n, i in enumerate(order.tolist())}
    return [fold_of[c] for c in conversations]


@dataclass(frozen=True, slots=True)
class Fitted:
    """A predictor's guesses fitted out of sample: each item's guess (None: none), how it was
    fitted, and, cross-fitted, each item's fold: each fold's guesses come from one fit (see
    the module docstring for what is read within a fold)."""

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
    """Each item's guess by a fit on the other folds' items (see `folds`); `scored`: the
    golds the guesses are scored against, where not those fitted on (a planted study scores
    the fits against an answer they never saw)."""
    assert reference.fit is not None
    dealt = folds(conversations, seed)
    fold = np.asarray(dealt, dtype=np.int64)
    guessed = golds if scored is None else scored
    out: list[Guess] = [None] * len(golds)
    for k in np.unique(fold).tolist():
        held = np.flatnonzero(fold == k).tolist()
        fitted = reference.fit([golds[i] for i in np.flatnonzero(fold != k).tolist()])
        for i, guess in zip(held, reference.guess(fitted, [guessed[i] for i in held]), strict=True):
            out[i] = guess
    return Fitted(out, "cross-fitted", dealt)


def out_of_sample(
    reference: Reference[G],
    golds: Sequence[G],
    conversations: Sequence[str],
    train: Sequence[G] | None = None,
    seed: int = 0,
) -> Fitted:
    """Each item's guess, fitted where it never sees the item's answer: on `train` (golds of
    a train split's items), cross-fitted by conversation when there is none, or not at all
    for a rule."""
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
    """A train split's examples for the fitted baselines: each item the task builds there
    (its first context), with the hint of each query it asks a model (generate form, its item
    key as the engine sets it) and the item's gold, as that query shows it (a pair's in the
    order asked); with the items' person-hidden twins as `person` asks, for a task that
    evaluates models (as a run asks them). Queries of one item that a baseline reads alike
    give one example."""
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
