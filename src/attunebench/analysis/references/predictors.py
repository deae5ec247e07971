"""References scored beside the models: what a constant, position or length alone achieve.

A task declares its references (`Scoring.references`); each is fitted out of sample
(`tasks.helpers.fitting`: on the train split, else cross-fitted by conversation; a rule fits
nothing), so it never sees the answer of an item it guesses. Its guesses are read as records of
a model named after it and scored with the task's own metrics on the same items and resamples
as the models, shown as rows of kind `reference` and never ranked. Recorded references
(`Scoring.recorded_references`) are replies from the data judged in the run beside each
model's answer; docs/report.md says more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum, clusters_in, jackknife_widened
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import Frame, IntArray
from attunebench.analysis.schema import ScoreRow
from attunebench.analysis.scores import HEADLINE
from attunebench.data.schema import Conversation
from attunebench.stats import FloatArray, Weights, none_if_nan
from attunebench.tasks.base import Guess, RecordedReference, Scored, Task, View, context_of
from attunebench.tasks.helpers.fitting import Fit, out_of_sample, train_items
from attunebench.tasks.helpers.metrics import Found, Metric, Values
from attunebench.tasks.helpers.twins import is_person_hidden


class GuessView(View[Any, Any]):
    """A reference's guess at an item, read as the item's record answered by the reference. It
    wraps the item's record rather than copying it: copying a record per item and reference cost
    most of the time here."""

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
    """The reference's guesses as views, and each one's item index (unguessed items left out);
    the views made by a C-level map (a summary makes tens of thousands)."""
    if len(views) != len(guesses):
        raise ValueError(f"{len(guesses)} guesses for {len(views)} items")
    kept = [i for i, guess in enumerate(guesses) if guess is not None]
    found = [guess for guess in guesses if guess is not None]
    shown = views if len(kept) == len(views) else [views[i] for i in kept]
    return list(map(GuessView, shown, map(_PREDICTION, found), map(_SCORED, found))), kept


_PREDICTION, _SCORED = itemgetter(0), itemgetter(1)


def shown_metrics(declaration: Task[Any, Any]) -> list[Metric]:
    """The metrics a reference is scored on: the headline, its parts and the mean per-item score
    (every other metric for every reference would cost more than the rest of an analysis)."""
    by_name = {metric.name: metric for metric in declaration.scoring.metrics}
    headline = by_name.get(declaration.scoring.headline_metric)
    return [
        metric
        for metric in declaration.scoring.metrics
        if metric.name == HEADLINE or (headline is not None and metric.values is headline.values)
    ]


def item_views(frame: Frame, cell: Cell) -> tuple[list[View[Any, Any]], IntArray]:
    """Each item of the cell once (from whichever model's record), and its conversation code."""
    kept = np.flatnonzero(cell.mask)
    first = np.sort(np.unique(frame.item[kept], return_index=True)[1])  # in the records' order
    records = kept[first].tolist()
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
    """A recorded reference's metrics: the headline's, its guesses' columns, the references'."""
    shown = shown_metrics(declaration)
    held = {key for view in guessed[:1] for key in view.scores}
    return [
        metric
        for metric in declaration.scoring.metrics
        if metric in shown
        or metric.of_references
        or (metric.column is not None and metric.column.key in held)
    ]


def train_golds(cell: Cell, train: Sequence[Conversation] | None) -> list[Any] | None:
    """The golds of the train split's items of the cell's task and variant; None without a split
    or such an item (the references are then cross-fitted)."""
    if train is None or cell.declaration is None:
        return None
    golds = [item.gold for item in train_items(cell.declaration, train, cell.variant)]
    return golds or None


@dataclass(frozen=True)
class RowScoring:
    """How a cell's reference rows are scored: resamples, fewest clusters, and whether it is the
    headline. The references of a cell mostly guess the same items: the resample weights of
    their conversations, and the weights of their folds, are made once for them all (the sums
    a `Weights` keeps are kept per values read, so the references share no number)."""

    bootstrap: ClusterBootstrap
    minimum: Minimum
    headline: bool
    _weights: dict[bytes, Weights] = field(default_factory=dict, repr=False, compare=False)
    _folds: dict[bytes, tuple[IntArray, Weights]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def weights(self, where: IntArray) -> Weights:
        """The resample weights of items of these conversations (codes)."""
        key = where.tobytes()
        if key not in self._weights:
            self._weights[key] = self.bootstrap.weights(where)
        return self._weights[key]

    def folds(self, folds: IntArray) -> tuple[IntArray, Weights]:
        """These folds as one array (`Weights.within` keeps its weights per array) and their
        `fold_weights`."""
        key = folds.tobytes()
        if key not in self._folds:
            self._folds[key] = (folds, fold_weights(folds))
        return self._folds[key]


@dataclass(frozen=True)
class Guessed:
    """A reference's guesses as views, each item's conversation code, how it was fitted, and
    (cross-fitted) each item's fold, within which its statistics are read."""

    views: list[View[Any, Any]]
    where: IntArray
    fit: Fit
    folds: IntArray | None = None


def fitted_rows(
    frame: Frame,
    cell: Cell,
    scoring: RowScoring,
    train: Sequence[Conversation] | None,
    seed: int,
) -> list[ScoreRow]:
    """The rows of a cell's declared references, each fitted out of sample."""
    declaration = cell.declaration
    assert declaration is not None
    references = declaration.scoring.references(context_of(cell.variant))
    if not references:
        return []
    views, conversations = item_views(frame, cell)
    golds = [view.gold for view in views]
    ids = [view.record.conversation_id for view in views]
    fitted_on = train_golds(cell, train)
    rows = []
    for name, reference in references.items():
        fitted = out_of_sample(reference, golds, ids, fitted_on, seed)
        shown, kept = guessed_views(views, fitted.guesses)
        folds = None if fitted.folds is None else np.asarray(fitted.folds)[kept]
        guessed = Guessed(shown, conversations[kept], fitted.fit, folds)
        rows += _rows(cell, name, guessed, shown_metrics(declaration), scoring)
    return rows


def reference_rows(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    cells: Mapping[tuple[str, str], Cell],
    headline_of: Mapping[str, str],
    minimum: Minimum,
    train: Sequence[Conversation] | None = None,
    seed: int = 0,
) -> list[ScoreRow]:
    """Every reference row: the declared references fitted on `train` (a train split's
    conversations) or cross-fitted with folds dealt by `seed`, and the recorded ones."""
    rows = []
    for (task, variant), cell in sorted(cells.items()):
        if cell.declaration is None or is_person_hidden(variant):
            continue  # a twin's items and gold are the shown item's: its references would repeat
        scoring = RowScoring(bootstrap, minimum, headline_of.get(task) == variant)
        rows += fitted_rows(frame, cell, scoring, train, seed)
        for name, recorded in cell.declaration.scoring.recorded_references().items():
            views, guesses, where = recorded_guesses(frame, cell, recorded)
            shown, _ = guessed_views(views, guesses)
            metrics = recorded_metrics(cell.declaration, shown)
            rows += _rows(cell, name, Guessed(shown, where, "none"), metrics, scoring)
    return rows


def evaluated(
    metric: Metric,
    found: Found,
    weights: Weights,
    folds: IntArray | None,
    per_fold: Weights | None = None,
) -> tuple[float, FloatArray]:
    """A reference's point and resampled values of a metric: over all its items, or, for
    cross-fitted guesses (`folds`), within each fold and averaged (`per_fold`: the folds'
    `fold_weights`, shared by the metrics of the same guesses)."""
    if folds is None:
        return metric.evaluate_values(found, weights)
    return within_folds(metric, found, weights, folds, per_fold)


def fold_weights(folds: IntArray) -> Weights:
    """One row per fold weighing its items 1 and every other item 0, each item its own
    cluster: the metric's value within each fold (its rows' totals: each fold's items)."""
    chosen = (folds[None, :] == np.unique(folds)[:, None]).astype(np.float64)
    return Weights(chosen, np.arange(len(folds)))


def within_folds(
    metric: Metric,
    found: Found,
    weights: Weights,
    folds: IntArray,
    per_fold: Weights | None = None,
) -> tuple[float, FloatArray]:
    """A metric read within each fold and averaged over the folds, weighted by their (resampled)
    items; a fold where it is undefined is left out. `per_fold`: `fold_weights(folds)`, made
    once for the metrics of the same guesses so that they share the sums it keeps."""
    per_fold = fold_weights(folds) if per_fold is None else per_fold
    points, sizes = metric.weighted(found, per_fold), per_fold.counts.sum(axis=1)
    drawn, resized = [], []
    for inside, total in weights.within(folds):  # shared by the metrics of these guesses
        drawn.append(metric.weighted(found, inside))
        resized.append(total)
    point = _average(points[None, :], sizes[None, :])[0]
    return float(point), _average(np.stack(drawn, axis=1), np.stack(resized, axis=1))


def _average(values: FloatArray, weights: FloatArray) -> FloatArray:
    """Per row, the weighted mean of the defined values (NaN where none is)."""
    usable = ~np.isnan(values) & (weights > 0)
    total = np.where(usable, weights, 0.0).sum(axis=1)
    summed = np.where(usable, np.nan_to_num(values) * weights, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        averaged: FloatArray = np.where(total > 0, summed / np.where(total > 0, total, 1), np.nan)
    return averaged


def _rows(
    cell: Cell, name: str, guessed: Guessed, shown: Sequence[Metric], scoring: RowScoring
) -> list[ScoreRow]:
    """One reference's rows: each shown metric with its interval, over the items it guessed."""
    declaration = cell.declaration
    views, where = guessed.views, guessed.where
    if not views or declaration is None:
        return []
    bootstrap, minimum = scoring.bootstrap, scoring.minimum
    weights = scoring.weights(where)
    too_few = minimum.of(where)
    clusters = clusters_in(bootstrap.cluster_of, where)  # its interval rests on
    read: dict[Values, Found] = {}
    folds, per_fold = (None, None) if guessed.folds is None else scoring.folds(guessed.folds)
    rows = []
    for metric in shown:
        if metric.values not in read:
            read[metric.values] = metric.values(views)
        found = read[metric.values]
        point, samples = evaluated(metric, found, weights, folds, per_fold)
        if np.isnan(point) and metric.name != declaration.scoring.headline_metric:
            continue
        low, high = bootstrap.interval(samples.reshape(-1, 1), clusters)
        if metric.widen:
            jack = metric.leave_one_out(found, weights)
            low[0], high[0] = jackknife_widened(point, low[0], high[0], samples, jack, metric.widen)
        value = none_if_nan(point)
        rows.append(
            ScoreRow(
                model=name,
                model_kind="reference",
                task=cell.task,
                variant=cell.variant,
                metric=metric.name,
                headline=scoring.headline and metric.name == declaration.scoring.headline_metric,
                value=value,
                ci_low=None if too_few else none_if_nan(low[0]),
                ci_high=None if too_few else none_if_nan(high[0]),
                reason=too_few if value is not None else "undefined on these items",
                n=len(views),
                n_conversations=int(np.unique(where).size),
                n_invalid=0,
                n_failed=0,
                subject=False,
                fit=guessed.fit,
            )
        )
    return rows
