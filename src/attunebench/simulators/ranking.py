"""Ranking fidelity: would simulated people rank the models as the real people do?

The models of `--runs` are scored twice on the items the simulator replayed: against the
people's own answers and against the simulated person's (`Scoring.answered_gold`, each model's
prediction scored again by `Task.score`), on the same items. Per task, Spearman's rho between
the two rankings with its interval, and the pairs whose order flips; `spearman` is the tasks'
mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

import numpy as np

from attunebench.analysis.agreement.ranks import rho_interval
from attunebench.analysis.agreement.reliability import spearman_rho
from attunebench.analysis.bootstrap import containing, percentile_interval
from attunebench.analysis.loading import Runs
from attunebench.analysis.provenance import Roster
from attunebench.analysis.resampled import Resampled, Resampler
from attunebench.analysis.schema import Estimate
from attunebench.records import ItemRecord
from attunebench.simulators.replay import ItemKey, Replayed, record_key, rollout_of
from attunebench.simulators.schema import Flip, ModelPlace, Ranking, TaskRanking
from attunebench.stats import none_if_nan
from attunebench.tasks.base import Gold, Item, Task

MIN_MODELS = 3  # fewer: two models are always ranked at +1 or -1


def simulated_golds(replayed: Replayed) -> dict[ItemKey, list[Gold]]:
    """Each item's gold had the person answered as the simulator did, per rollout that answered."""
    items = replayed.by_key()
    found: dict[ItemKey, list[Gold]] = {}
    for record in sorted(replayed.records, key=rollout_of):
        key = record_key(record)
        view = replayed.task.scoring.view(record)
        if record.status != "ok" or view.prediction is None:
            continue
        gold = replayed.task.scoring.answered_gold(items[key].gold, view.prediction)
        if gold is not None:
            found.setdefault(key, []).append(gold)
    return found


def rescored(task: Task[Any, Any], item: Item[Any], record: ItemRecord, gold: Gold) -> ItemRecord:
    """The model's record with `gold` as the item's gold, its answer scored again."""
    against = replace(item, gold=gold)
    prediction = task.scoring.view(record).prediction
    if record.status == "ok":
        scored = task.score(against, prediction)
    else:
        scored = task.worst(against, prediction)
    update = {"gold": gold.model_dump(mode="json"), "score": scored.score}
    return record.model_copy(update={**update, "scores": dict(scored.values)})


def _rank_rows(
    replayed: Replayed, records: Sequence[ItemRecord], models: Sequence[str]
) -> tuple[dict[str, list[ItemRecord]], dict[str, list[ItemRecord]], int, int]:
    """Per model that answered the task, its records on the common items with both golds; the
    common items and those left out. A model that does not answer the task is not ranked on it."""
    items = replayed.by_key()
    golds = simulated_golds(replayed)
    by_item: dict[ItemKey, dict[str, ItemRecord]] = {}
    for record in records:
        key = record_key(record)
        if record.task == replayed.task.name and key in items and record.status != "failed":
            by_item.setdefault(key, {})[record.model] = record
    answering = {m for found in by_item.values() for m in found}
    models = [m for m in models if m in answering]
    if not models:
        return {}, {}, 0, 0
    answered = [k for k, found in by_item.items() if all(m in found for m in models)]
    common = [k for k in answered if k in golds]
    people = {m: [by_item[k][m] for k in common] for m in models}
    simulated = {
        m: [rescored(replayed.task, items[k], by_item[k][m], g) for k in common for g in golds[k]]
        for m in models
    }
    return people, simulated, len(common), len(answered) - len(common)


def task_ranking(
    replayed: Replayed,
    runs: Runs,
    models: Sequence[str],
    kinds: Mapping[str, str],
    resampler: Resampler,
) -> tuple[TaskRanking, Resampled] | None:
    """One task's two rankings and their rho (None: no model's items were replayed)."""
    people, simulated, n_items, unanswered = _rank_rows(replayed, runs.records, models)
    if n_items == 0:
        return None
    models = list(people)  # those that answer this task
    task = replayed.task
    metric = task.scoring.metric()
    by_people, by_sim = (
        [resampler.metric(metric, list(map(task.scoring.view, rows[m]))) for m in models]
        for rows in (people, simulated)
    )
    x, y = np.array([f.point for f in by_people]), np.array([f.point for f in by_sim])
    x_drawn = np.column_stack([f.samples for f in by_people])
    y_drawn = np.column_stack([f.samples for f in by_sim])
    clusters = min(f.clusters for f in by_people)
    if len(models) < MIN_MODELS:
        rho = Estimate(reason=f"fewer than {MIN_MODELS} models to rank")
        found = Resampled(np.nan, np.full(resampler.bootstrap.resamples, np.nan), clusters)
    else:
        correlation = rho_interval(
            spearman_rho, x, y, x_drawn, y_drawn, resampler.bootstrap.confidence, clusters
        )
        rho = Estimate(**correlation.model_dump(exclude={"p_value"}))
        found = Resampled(float(spearman_rho(x, y)), spearman_rho(x_drawn, y_drawn), clusters)
    places = [
        ModelPlace(model=m, kind=kinds[m], people=none_if_nan(a), simulator=none_if_nan(b))
        for m, a, b in zip(models, x, y, strict=True)
    ]
    return TaskRanking(spearman=rho, models=places, n_items=n_items, n_unanswered=unanswered), found


def flips(task: str, places: Sequence[ModelPlace]) -> list[Flip]:
    """The pairs of models the two rankings order in opposite ways (ties are no flip)."""
    out = []
    for a, b in combinations(places, 2):
        if None in (a.people, a.simulator, b.people, b.simulator):
            continue
        by_people = np.sign((a.people or 0.0) - (b.people or 0.0))
        by_sim = np.sign((a.simulator or 0.0) - (b.simulator or 0.0))
        if by_people * by_sim < 0:
            high, low = (a, b) if by_people > 0 else (b, a)
            out.append(Flip(task=task, people_higher=high.model, simulator_higher=low.model))
    return out


def ranking(
    replayed: Sequence[Replayed],
    runs: Runs | None,
    resampler: Resampler,
    include: frozenset[str] = frozenset(),
) -> Ranking:
    """Both rankings of the runs' models on every replayed task (see the module docstring)."""
    if runs is None:
        return Ranking(spearman=Estimate(reason="no --runs given: no models to rank"))
    roster = Roster.of(runs)
    ranked = {"model", *include}  # the models under test, and the kinds asked for
    models = sorted({r.model for r in runs.records if roster.kind(r.model) in ranked})
    kinds = {m: roster.kind(m) for m in models}
    shown = [str(run.path) for run in runs.runs]
    if not models:
        why = "no model under test in --runs (baselines and sim/ models only when asked for)"
        return Ranking(spearman=Estimate(reason=why), runs=shown)
    found = {r.task.name: task_ranking(r, runs, models, kinds, resampler) for r in replayed}
    by_task = {name: pair for name, pair in found.items() if pair is not None}
    if not by_task:
        why = "no item of --runs was replayed (the runs were made on other data?)"
        return Ranking(spearman=Estimate(reason=why), runs=shown)
    return Ranking(
        spearman=_mean_rho([pair[1] for pair in by_task.values()], resampler),
        flips=[f for name, pair in by_task.items() for f in flips(name, pair[0].models)],
        by_task={name: pair[0] for name, pair in by_task.items()},
        runs=shown,
    )


def _mean_rho(found: Sequence[Resampled], resampler: Resampler) -> Estimate:
    """The mean of the tasks' rho, its interval from the same resamples."""
    defined = [f for f in found if not np.isnan(f.point)]
    if not defined:
        return Estimate(reason=f"no task has {MIN_MODELS} models to rank")
    point = float(np.mean([f.point for f in defined]))
    stacked = np.column_stack([f.samples for f in defined])
    # A resample where no task's rho is defined (every model tied) has no mean: NaN, with no
    # warning (nanmean warns on an all-NaN row).
    counted = np.sum(~np.isnan(stacked), axis=1)
    drawn = np.where(counted > 0, np.nansum(stacked, axis=1) / np.maximum(counted, 1), np.nan)
    clusters = min(f.clusters for f in defined)
    low, high = percentile_interval(drawn[:, None], resampler.bootstrap.confidence, clusters)
    low_end, high_end = containing(point, float(low[0]), float(high[0]))
    return Estimate(value=point, ci_low=none_if_nan(low_end), ci_high=none_if_nan(high_end))
