"""Scores per (task, variant, metric, model) with cluster-bootstrap intervals and counts.

Every metric is the task's own declaration (`tasks.helpers.metrics`): its point value with weights
of 1, and its bootstrap distribution with the shared resamples' conversation counts as weights.
The headline is the metric the task names (`Scoring.headline_metric`; `score`, the mean per-item
score, unless it names another).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, clusters_in, jackknife_widened
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import STATUS_CODES, FloatArray, Frame, IntArray, present
from attunebench.tasks.base import Scoring, View
from attunebench.tasks.helpers.metrics import Column, Found, Metric, Values

HEADLINE = "score"


@dataclass(frozen=True)
class MetricScores:
    """One metric for every model of the frame (NaN where a model has no value).

    `samples` holds the resampled values (resamples x models) that the interval came from.
    """

    task: str
    variant: str
    metric: str
    point: FloatArray
    low: FloatArray
    high: FloatArray
    samples: FloatArray
    description: str = ""
    higher_is_better: bool = True


@dataclass(frozen=True)
class Counts:
    n: int
    n_conversations: int
    n_invalid: int
    n_failed: int
    n_judge_failed: int = 0


def headline_metric(cell: Cell) -> str:
    """The name of the cell's headline metric."""
    return cell.declaration.scoring.headline_metric if cell.declaration is not None else HEADLINE


def cell_metrics(cell: Cell, frame: Frame) -> list[Metric]:
    """The models' metrics of the cell: the declared ones (not those of a recorded reference),
    then those that depend on what it holds."""
    declaration = cell.declaration
    if declaration is None:
        return []
    declared = [metric for metric in declaration.scoring.metrics if not metric.of_references]
    if type(declaration.scoring).extra_metrics is Scoring.extra_metrics:
        return declared  # none that depend on the records: they are not gathered
    return [*declared, *declaration.scoring.extra_metrics(frame.records_at(cell.mask))]


def cell_headline(cell: Cell, frame: Frame) -> Metric | None:
    """The cell's headline metric, as the models' rows compute it (None where the cell has no
    declaration or the metric is not among its models' metrics)."""
    name = headline_metric(cell)
    return next((m for m in cell_metrics(cell, frame) if m.name == name), None)


def metric_values(frame: Frame, cell: Cell, metric: Metric, rows: IntArray) -> Found:
    """A metric's per-item values of these records of the cell, read as `metric_scores` reads
    them: from the frame's columns for a `Column` metric, else from the records' views."""
    if metric.column is not None:
        return column_values(frame, rows, metric.column)
    return metric.values([cell.views[i] for i in rows.tolist()])


def column_values(frame: Frame, rows: IntArray, column: Column) -> FloatArray:
    """A `Column`'s values (items, 1) for these records, from the frame's columns: what
    `column.of` reads from each record's view, without making the views."""
    if column.flag is not None:
        holds = np.array([column.flag in found for found in frame.flag_sets], dtype=np.float64)
        values = holds[frame.flag[rows]]
    else:
        source = frame.score if column.key is None else frame.scores.get(column.key)
        values = np.full(len(rows), np.nan) if source is None else source[rows]
    unread = frame.status[rows] != STATUS_CODES["ok"]
    if not column.parsed_only:
        unread &= frame.status[rows] == STATUS_CODES["failed"]
    values[unread] = np.nan
    return values.reshape(-1, 1)


def metric_scores(frame: Frame, bootstrap: ClusterBootstrap, cell: Cell) -> list[MetricScores]:
    """Every metric of one cell for every model, with intervals (undefined ones dropped).

    Column metrics read the frame; the others read each model's views, once per distinct
    `values` function (metrics that share one share the reading).
    """
    models = len(frame.models)
    metrics = cell_metrics(cell, frame)
    points = {m.name: np.full(models, np.nan) for m in metrics}
    samples = {m.name: np.full((bootstrap.resamples, models), np.nan) for m in metrics}
    jackknife: dict[str, dict[int, FloatArray]] = {m.name: {} for m in metrics if m.widen}
    clusters = np.full(models, bootstrap.n_clusters)  # each model's own, for its interval
    for model in present(frame.model[cell.mask], models):
        rows = cell.rows(frame, model)
        clusters[model] = clusters_in(bootstrap.cluster_of, frame.conversation[rows])
        weights = bootstrap.weights(frame.conversation[rows])
        read: dict[Values, Found] = cell.readings.setdefault(model, {})
        views: list[View[Any, Any]] | None = None
        for metric in metrics:
            if metric.column is not None:
                found: Found = column_values(frame, rows, metric.column)
            elif metric.values in read:
                found = read[metric.values]
            else:
                views = views if views is not None else [cell.views[i] for i in rows.tolist()]
                found = read[metric.values] = metric.values(views)
            point, drawn = metric.evaluate_values(found, weights)
            points[metric.name][model] = point
            samples[metric.name][:, model] = drawn
            if metric.widen:
                jackknife[metric.name][model] = metric.leave_one_out(found, weights)
    out = []
    for metric in metrics:
        if np.isnan(points[metric.name]).all() and metric.name != headline_metric(cell):
            continue  # nothing to show (a dimension the gold lacks, a judge mode not run)
        low, high = bootstrap.interval(samples[metric.name], clusters)
        if metric.widen:
            for model, leave_one_out in jackknife[metric.name].items():
                low[model], high[model] = jackknife_widened(
                    points[metric.name][model],
                    low[model],
                    high[model],
                    samples[metric.name][:, model],
                    leave_one_out,
                    metric.widen,
                )
        out.append(
            MetricScores(
                cell.task,
                cell.variant,
                metric.name,
                points[metric.name],
                low,
                high,
                samples[metric.name],
                metric.description,
                metric.higher_is_better,
            )
        )
    return out


def counts(frame: Frame, cell: Cell) -> dict[str, Counts]:
    """Per model: items scored, conversations, invalid and failed records, and scored items
    with a verdict lost to a judge failure."""
    every = frame.cell(cell.task, cell.variant)
    size = len(frame.models)

    def tally(mask: np.ndarray) -> np.ndarray:
        return np.bincount(frame.model[mask], minlength=size)

    n = tally(cell.mask)
    invalid = tally(cell.mask & (frame.status == STATUS_CODES["invalid"]))
    failed = tally(every & (frame.status == STATUS_CODES["failed"]))
    judge_failed = tally(cell.mask & frame.judge_failed)
    pairs = np.unique(
        frame.model[cell.mask] * len(frame.conversations) + frame.conversation[cell.mask]
    )
    conversations = np.bincount(pairs // max(len(frame.conversations), 1), minlength=size)
    return {
        frame.models[m]: Counts(
            int(n[m]), int(conversations[m]), int(invalid[m]), int(failed[m]), int(judge_failed[m])
        )
        for m in np.unique(frame.model[every])
    }
