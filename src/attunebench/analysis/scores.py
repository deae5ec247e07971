"""Scores per (task, variant, metric, model) with cluster-bootstrap intervals and counts."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap
from attunebench.analysis.frame import STATUS_CODES, BoolArray, FloatArray, Frame, IntArray
from attunebench.analysis.metrics import (
    HEADLINE,
    GenericMetric,
    SumMetric,
    TableMetric,
    task_metrics,
)  # fmt: skip
from attunebench.records import ItemRecord


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


@dataclass(frozen=True)
class Counts:
    n: int
    n_conversations: int
    n_invalid: int
    n_failed: int


def headline(frame: Frame, bootstrap: ClusterBootstrap, task: str, variant: str) -> MetricScores:
    """The mean primary score per model, resampled with every resample."""
    mask = frame.cell(task, variant) & frame.scored
    point, samples = bootstrap.means(
        frame.score[mask], frame.conversation[mask], frame.model[mask], len(frame.models)
    )
    low, high = bootstrap.interval(samples)
    return MetricScores(task, variant, HEADLINE, point, low, high, samples)


def _sum_metric(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    mask: BoolArray,
    metric: SumMetric,
    stats: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    sums = bootstrap.sums(stats, frame.conversation[mask], frame.model[mask], len(frame.models))
    return metric.finish(sums.sum(axis=1)), metric.finish(bootstrap.replicate(sums))


def _table_metric(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    mask: BoolArray,
    metric: TableMetric,
    resamples: int,
) -> tuple[FloatArray, FloatArray]:
    cell, x, y = metric.cells(frame.records_at(mask))
    usable = cell >= 0
    models, clusters = (
        frame.model[mask][usable],
        bootstrap.cluster_of[frame.conversation[mask]][usable],
    )
    point = np.full(len(frame.models), np.nan)
    samples = np.full((resamples, len(frame.models)), np.nan)
    counts = bootstrap.counts[:resamples]
    for m in np.unique(models):
        table = np.zeros((bootstrap.n_clusters, len(x)))
        np.add.at(table, (clusters[models == m], cell[usable][models == m]), 1.0)
        point[m] = metric.statistic(x, y, table.sum(axis=0, keepdims=True))[0]
        samples[:, m] = metric.statistic(x, y, counts @ table)
    return point, samples


def _generic_metric(
    frame: Frame, bootstrap: ClusterBootstrap, mask: BoolArray, metric: GenericMetric,
    resamples: int,
) -> tuple[FloatArray, FloatArray]:
    """Any `metric(records)`, called on each resample's records (repeated as drawn)."""
    point = np.full(len(frame.models), np.nan)
    samples = np.full((resamples, len(frame.models)), np.nan)
    for m in np.unique(frame.model[mask]):
        rows = np.flatnonzero(mask & (frame.model == m))
        by_cluster: dict[int, list[ItemRecord]] = defaultdict(list)
        for i in rows:
            by_cluster[int(bootstrap.cluster_of[frame.conversation[i]])].append(frame.records[i])
        point[m] = _number(metric.function([frame.records[i] for i in rows]))
        for b, draws in enumerate(bootstrap.counts[:resamples]):
            drawn = [r for k, rs in by_cluster.items() for r in rs * int(draws[k])]
            samples[b, m] = _number(metric.function(drawn))
    return point, samples


def _number(value: float | None) -> float:
    return np.nan if value is None else float(value)


def secondary(
    frame: Frame, bootstrap: ClusterBootstrap, task: str, variant: str, corpus_resamples: int,
    label_table: FloatArray | None = None,
) -> list[MetricScores]:
    """Every secondary metric of one task and variant (see `metrics.task_metrics`)."""
    mask = frame.cell(task, variant) & frame.scored
    resamples = min(corpus_resamples, bootstrap.resamples)
    out = []
    for metric in task_metrics(task, frame, mask, label_table):
        if isinstance(metric, SumMetric):
            point, samples = _sum_metric(frame, bootstrap, mask, metric, metric.stats(frame, mask))
        elif isinstance(metric, TableMetric):
            point, samples = _table_metric(frame, bootstrap, mask, metric, resamples)
        else:
            point, samples = _generic_metric(frame, bootstrap, mask, metric, resamples)
        if np.isnan(point).all():
            continue  # nothing to show (a dimension the gold lacks, a judge mode not run)
        low, high = bootstrap.interval(samples)
        out.append(MetricScores(task, variant, metric.name, point, low, high, samples))
    return out


def counts(frame: Frame, task: str, variant: str) -> dict[str, Counts]:
    """Per model: items scored, conversations, invalid and failed records."""
    cell = frame.cell(task, variant)
    size = len(frame.models)

    def tally(mask: BoolArray) -> IntArray:
        return np.bincount(frame.model[mask], minlength=size)

    scored = cell & frame.scored
    n = tally(scored)
    invalid = tally(cell & (frame.status == STATUS_CODES["invalid"]))
    failed = tally(cell & (frame.status == STATUS_CODES["failed"]))
    pairs = np.unique(frame.model[scored] * len(frame.conversations) + frame.conversation[scored])
    conversations = np.bincount(pairs // max(len(frame.conversations), 1), minlength=size)
    return {
        frame.models[m]: Counts(int(n[m]), int(conversations[m]), int(invalid[m]), int(failed[m]))
        for m in np.unique(frame.model[cell])
    }
