"""References scored beside the models: what a constant, position or length alone achieve.

A task declares its references (`Task.references`): predictors that read only what the gold
says of an item's position or length, or nothing ("always the later reply", "the usual rating
at this point of a conversation", "the train median"). Each gives every item a guess, a
prediction with its score; the guesses are read as records of a model named after the
reference and scored with the task's own declared metrics, headline included, on the same
items and resamples as the models (the headline, its parts and the mean per-item score). They
are shown as rows of kind `reference`, never ranked with the models under test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import Frame, IntArray
from attunebench.analysis.schema import ScoreRow
from attunebench.analysis.scores import HEADLINE
from attunebench.records import ItemRecord
from attunebench.stats import none_if_nan
from attunebench.tasks.base import Guess, Task, View
from attunebench.tasks.metrics import Found, Metric, Values


def guessed_views(
    declaration: Task[Any, Any], name: str, views: Sequence[View[Any, Any]], guesses: list[Guess]
) -> tuple[list[View[Any, Any]], list[int]]:
    """The reference's guesses as views of records of a model named `name`, and the index of
    each one's item (items it makes no guess at are left out)."""
    out, kept = [], []
    for i, (view, guess) in enumerate(zip(views, guesses, strict=True)):
        if guess is None:
            continue
        prediction, scored = guess
        # The typed prediction is the view's; metrics never read the record's JSON form of
        # it, and writing it for every item and reference would cost most of the time here.
        record: ItemRecord = view.record.model_copy(
            update={
                "model": name,
                "status": "ok",
                "prediction": None,
                "score": scored.score,
                "scores": dict(scored.values),
                "flags": (),
            }
        )
        out.append(View(record, view.gold, prediction))
        kept.append(i)
    return out, kept


def shown_metrics(declaration: Task[Any, Any]) -> list[Metric]:
    """The metrics a reference is scored on: the headline, those read from the same values
    (its parts), and the mean per-item score. Every other metric read again for every
    reference would cost more than the rest of an analysis."""
    by_name = {metric.name: metric for metric in declaration.metrics}
    headline = by_name.get(declaration.headline_metric)
    return [
        metric
        for metric in declaration.metrics
        if metric.name == HEADLINE or (headline is not None and metric.values is headline.values)
    ]


def item_views(frame: Frame, cell: Cell) -> tuple[list[View[Any, Any]], IntArray]:
    """Each item of the cell once (from whichever model's record), and its conversation code."""
    seen: dict[int, int] = {}
    kept = np.flatnonzero(cell.mask)
    for code, i in zip(frame.item[kept].tolist(), kept.tolist(), strict=True):
        seen.setdefault(code, i)
    records = list(seen.values())
    views = cell.views
    return [views[i] for i in records], frame.conversation[records]


def reference_rows(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    cells: Mapping[tuple[str, str], Cell],
    headline_of: Mapping[str, str],
    minimum: Minimum,
) -> list[ScoreRow]:
    rows = []
    for (task, variant), cell in sorted(cells.items()):
        declaration = cell.declaration
        if declaration is None or not declaration.references():
            continue
        views, conversations = item_views(frame, cell)
        items = [(v.record.conversation_id, v.gold) for v in views]
        for name, reference in declaration.references().items():
            guessed, kept = guessed_views(declaration, name, views, reference(items))
            if not guessed:
                continue
            where = conversations[kept]
            weights = bootstrap.weights(where)
            too_few = minimum.of(where)
            clusters = int(np.unique(bootstrap.cluster_of[where]).size)  # its interval rests on
            headline = headline_of.get(task) == variant
            read: dict[Values, Found] = {}
            for metric in shown_metrics(declaration):
                if metric.values not in read:
                    read[metric.values] = metric.values(guessed)
                point, samples = metric.evaluate_values(read[metric.values], weights)
                if np.isnan(point) and metric.name != declaration.headline_metric:
                    continue
                low, high = bootstrap.interval(samples.reshape(-1, 1), clusters)
                value = none_if_nan(point)
                rows.append(
                    ScoreRow(
                        model=name,
                        model_kind="reference",
                        task=task,
                        variant=variant,
                        metric=metric.name,
                        headline=headline and metric.name == declaration.headline_metric,
                        value=value,
                        ci_low=None if too_few else none_if_nan(low[0]),
                        ci_high=None if too_few else none_if_nan(high[0]),
                        reason=too_few if value is not None else "undefined on these items",
                        n=len(guessed),
                        n_conversations=int(np.unique(where).size),
                        n_invalid=0,
                        n_failed=0,
                        subject=False,
                    )
                )
    return rows
