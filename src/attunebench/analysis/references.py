"""References scored beside the models: what a constant, position or length alone achieve.

A task declares its references (`Task.references`): predictors that read only what the gold
says of an item's position or length, or nothing ("always the later reply", "the usual rating
at this point of a conversation", "the train median"). Each gives every item a guess, a
prediction with its score; the guesses are read as records of a model named after the
reference and scored with the task's own declared metrics, headline included, on the same
items and resamples as the models (the headline, its parts and the mean per-item score). They
are shown as rows of kind `reference`, never ranked with the models under test.

A task's recorded references (`Task.recorded_references`) were judged in the run: a reply
from the data (a real model's), scored by the same judges beside each model's answer and kept
in that answer's record. Each item's guess is read from the first of its records that holds
one, and the row shows every declared metric its values define (the person's own verdict on
the reply beside the judges' score, say), the headline included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum, jackknife_widened
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import Frame, IntArray
from attunebench.analysis.schema import ScoreRow
from attunebench.analysis.scores import HEADLINE
from attunebench.stats import none_if_nan
from attunebench.tasks.base import Guess, RecordedReference, Scored, Task, View
from attunebench.tasks.metrics import Found, Metric, Values
from attunebench.tasks.twins import is_person_hidden


class GuessView(View[Any, Any]):
    """A reference's guess at an item, read as the item's record answered by the reference:
    `ok`, with the guess's prediction, score and values, and no flags. `record` stays the
    item's record the guess was made for (its conversation, turn and item): metrics read only
    those of it, and copying a record per item and reference cost most of the time here."""

    __slots__ = ("scored",)

    def __init__(self, view: View[Any, Any], prediction: Any, scored: Scored) -> None:
        self.record, self.gold, self.prediction = view.record, view.gold, prediction
        self.status, self.parsed = "ok", True
        self.scored = scored

    @property
    def score(self) -> float | None:
        return self.scored.score

    @property
    def scores(self) -> Mapping[str, float | None]:
        return self.scored.values

    def value(self, name: str) -> float | None:
        return self.scored.values.get(name)

    @property
    def flags(self) -> tuple[str, ...]:
        return ()


def guessed_views(
    views: Sequence[View[Any, Any]], guesses: list[Guess]
) -> tuple[list[View[Any, Any]], list[int]]:
    """The reference's guesses as views, and the index of each one's item (items it makes no
    guess at are left out)."""
    out: list[View[Any, Any]] = []
    kept = []
    for i, (view, guess) in enumerate(zip(views, guesses, strict=True)):
        if guess is not None:
            out.append(GuessView(view, *guess))
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


def recorded_guesses(
    frame: Frame, cell: Cell, reference: RecordedReference[Any]
) -> tuple[list[View[Any, Any]], list[Guess], IntArray]:
    """Each item's guess from the first of its records (any model's) that holds one, with that
    record's view and conversation code. Only records holding the value it reads are read."""
    found: dict[int, tuple[int, Guess]] = {}
    column = frame.scores.get(reference.reads)
    if column is None:
        return [], [], np.zeros(0, dtype=np.int64)
    kept = np.flatnonzero(cell.mask & ~np.isnan(column))
    views = cell.views
    for code, i in zip(frame.item[kept].tolist(), kept.tolist(), strict=True):
        if code not in found and (guess := reference.guess(views[i])) is not None:
            found[code] = (i, guess)
    records = [i for i, _ in found.values()]
    return [views[i] for i in records], [g for _, g in found.values()], frame.conversation[records]


def recorded_metrics(
    declaration: Task[Any, Any], guessed: Sequence[View[Any, Any]]
) -> list[Metric]:
    """A recorded reference's metrics: the headline's, the columns its guesses hold (its rubric
    score beside the models', say), and the metrics of the recorded references (the person's
    own verdict on the reply beside the judges' score)."""
    shown = shown_metrics(declaration)
    held = {key for view in guessed[:1] for key in view.scores}
    return [
        metric
        for metric in declaration.metrics
        if metric in shown
        or metric.of_references
        or (metric.column is not None and metric.column.key in held)
    ]


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
        if declaration is None or is_person_hidden(variant):
            continue  # a twin's items and gold are the shown item's: its references would repeat
        headline = headline_of.get(task) == variant
        if declaration.references():
            views, conversations = item_views(frame, cell)
            items = [(v.record.conversation_id, v.gold) for v in views]
            for name, reference in declaration.references().items():
                guessed, kept = guessed_views(views, reference(items))
                shown = shown_metrics(declaration)
                rows += _rows(
                    cell, name, guessed, conversations[kept], shown, headline, bootstrap, minimum
                )
        for name, recorded in declaration.recorded_references().items():
            views, guesses, where = recorded_guesses(frame, cell, recorded)
            guessed, _ = guessed_views(views, guesses)
            shown = recorded_metrics(declaration, guessed)
            rows += _rows(cell, name, guessed, where, shown, headline, bootstrap, minimum)
    return rows


def _rows(
    cell: Cell,
    name: str,
    guessed: list[View[Any, Any]],
    where: IntArray,
    shown: Sequence[Metric],
    headline: bool,
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
) -> list[ScoreRow]:
    """One reference's rows: each shown metric with its interval, over the items it guessed."""
    declaration = cell.declaration
    if not guessed or declaration is None:
        return []
    task, variant = cell.task, cell.variant
    weights = bootstrap.weights(where)
    too_few = minimum.of(where)
    clusters = int(np.unique(bootstrap.cluster_of[where]).size)  # its interval rests on
    read: dict[Values, Found] = {}
    rows = []
    for metric in shown:
        if metric.values not in read:
            read[metric.values] = metric.values(guessed)
        point, samples = metric.evaluate_values(read[metric.values], weights)
        if np.isnan(point) and metric.name != declaration.headline_metric:
            continue
        low, high = bootstrap.interval(samples.reshape(-1, 1), clusters)
        if metric.widen:
            jack = metric.leave_one_out(read[metric.values], weights)
            low[0], high[0] = jackknife_widened(point, low[0], high[0], samples, jack, metric.widen)
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
