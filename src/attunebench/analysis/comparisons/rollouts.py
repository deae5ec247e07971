"""One simulator run once per seed (`NAME?seed=S`): one model asked each item several times.

The headline pools every rollout's records (the interval resamples conversations, never
rollouts); the noise floor is the headline in each rollout. The crowd reference
(`Scoring.crowd`) is cross-fitted and read within each fold, as the report reads it (across
folds it leans away from each fold's answers: -0.707 on outcome where within folds it is 0).
`ceiling` and `share_of_ceiling` are the people's own retest agreement (`references.ceiling`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, expanded_confidence
from attunebench.analysis.cells import task_object
from attunebench.analysis.loading import Runs
from attunebench.analysis.provenance import rollout_seeds
from attunebench.analysis.references.ceiling import Ceiling, repeat_views, share
from attunebench.analysis.references.predictors import guessed_views
from attunebench.analysis.resampled import MIN_CLUSTERS, Resampled, Resampler
from attunebench.analysis.schema import (
    Crowd,
    Estimate,
    NoiseFloor,
    RolloutFigure,
    Rollouts,
    SelfConsistency,
)
from attunebench.data.schema import Conversation
from attunebench.records import ItemRecord
from attunebench.tasks.base import Task, View
from attunebench.tasks.helpers.fitting import out_of_sample

NO_PROBES = "no retest probes in this data: the person's own ceiling is not measured"
ONE_ROLLOUT = "one rollout: choice answers on real data are the same in every rollout"


def pooled(records: Sequence[ItemRecord], seeds: Mapping[str, int]) -> list[ItemRecord]:
    """The rollouts' records read together: a choice answer from the first rollout alone."""
    first = min(seeds.values())
    return [r for r in records if r.mode != "choice" or seeds[r.model] == first]


def noise_floor(values: Sequence[float | None], note: str | None = None) -> NoiseFloor:
    """A figure's values over rollouts (None where undefined), their SD and range.

    >>> noise_floor([0.5, 0.7, 0.6]).spread
    0.2
    """
    defined = np.array([v for v in values if v is not None and not np.isnan(v)], dtype=float)
    spread = round(float(defined.max() - defined.min()), 12) if len(defined) else None
    sd = float(defined.std(ddof=1)) if len(defined) > 1 else None
    return NoiseFloor(values=list(values), sd=sd, spread=spread, note=note)


def answered_views(task: Task[Any, Any], records: Sequence[ItemRecord]) -> list[View[Any, Any]]:
    """The records read into the task's types, failed calls left out (counted)."""
    return [task.scoring.view(r) for r in records if r.status != "failed"]


def rollout_noise(
    task: Task[Any, Any], records: Sequence[ItemRecord], seeds: Mapping[str, int]
) -> NoiseFloor:
    """The headline in each rollout (of the pooled records), and its spread."""
    metric = task.scoring.metric()
    views = answered_views(task, records)
    order = sorted(set(seeds.values()))
    values = [metric.value([v for v in views if seeds[v.record.model] == s]) for s in order]
    return noise_floor(values, ONE_ROLLOUT if len(values) == 1 else None)


def crowd_of(
    task: Task[Any, Any], views: Sequence[View[Any, Any]], resampler: Resampler
) -> tuple[Crowd, Resampled] | None:
    """The crowd reference's headline on the items (one view each); None where there is none."""
    reference = task.scoring.references().get(task.scoring.crowd) if task.scoring.crowd else None
    if reference is None or task.scoring.crowd is None:
        return None
    golds = [view.gold for view in views]
    fitted = out_of_sample(reference, golds, [view.record.conversation_id for view in views])
    guessed, kept = guessed_views(views, fitted.guesses)
    folds = None if fitted.folds is None else np.asarray(fitted.folds, dtype=np.int64)[kept]
    found = resampler.metric(task.scoring.metric(), guessed, folds)
    shown = resampler.estimate(found)
    return Crowd(**shown.model_dump(), reference=task.scoring.crowd, fit=fitted.fit), found


def ceiling_of(
    task: Task[Any, Any],
    items: Sequence[View[Any, Any]],
    conversations: Sequence[Conversation],
    found: Resampled,
    resampler: Resampler,
) -> dict[str, Any]:
    """The `RolloutFigure` fields of the people's own ceiling on the task, the simulator's share
    of it and the task's chance (on the golds of `items`, one view each)."""
    repeats = repeat_views(task, list(conversations))
    if not repeats:
        return {"ceiling_reason": NO_PROBES}
    agreement = resampler.metric(task.scoring.metric(), repeats)
    ceiling = resampler.estimate(agreement)
    chance = task.scoring.chance([view.gold for view in items])
    fields = {"ceiling": ceiling, "chance": chance}
    if chance is None:
        return {**fields, "share_of_ceiling": Estimate(reason="the task declares no chance level")}
    if np.isnan(found.point):
        undefined = Estimate(reason="the simulator's headline is undefined")
        return {**fields, "share_of_ceiling": undefined}
    entry = SelfConsistency(
        **ceiling.model_dump(),
        metric=task.scoring.headline_metric,
        chance=chance,
        n=len(repeats),
        n_conversations=agreement.clusters,
    )
    clusters = min(found.clusters, agreement.clusters)
    enough = clusters >= MIN_CLUSTERS and ceiling.ci_low is not None
    level = expanded_confidence(resampler.bootstrap.confidence, clusters) if enough else None
    measured = Ceiling(entry, agreement.samples, agreement.clusters)
    shown = share(found.point, found.samples, measured, chance, level)
    return {**fields, "share_of_ceiling": shown}


def item_views(task: Task[Any, Any], records: Sequence[ItemRecord]) -> list[View[Any, Any]]:
    """One record's view per item the rollouts were asked, in the records' order."""
    seen: dict[tuple[str, int, str, str], View[Any, Any]] = {}
    for r in records:
        seen.setdefault(
            (r.conversation_id, r.turn_index, r.item_id, r.variant), task.scoring.view(r)
        )
    return list(seen.values())


def rollout_figure(
    task: Task[Any, Any],
    records: Sequence[ItemRecord],
    seeds: Mapping[str, int],
    conversations: Mapping[str, Conversation],
    resampler: Resampler,
) -> tuple[RolloutFigure, NoiseFloor]:
    """One task's figure over a simulator's rollouts (`records`: theirs on the task, `seeds`:
    model name -> rollout seed), and the spread of its headline over them."""
    records = pooled(records, seeds)
    noise = rollout_noise(task, records, seeds)
    metric = task.scoring.metric()
    views = answered_views(task, records)
    found = resampler.metric(metric, views)
    first = min(seeds.values())
    crowd = crowd_of(task, [v for v in views if seeds[v.record.model] == first], resampler)
    minus = None if crowd is None else resampler.difference(found.minus(crowd[1]), noise.spread)
    items = item_views(task, records)
    asked = list(dict.fromkeys(v.record.conversation_id for v in items))
    known = [conversations[c] for c in asked if c in conversations]
    figure = RolloutFigure(
        **resampler.estimate(found).model_dump(),
        metric=metric.name,
        description=metric.description,
        n_items=len(items),
        n_conversations=len(asked),
        n_invalid=sum(r.status == "invalid" for r in records),
        n_failed=sum(r.status == "failed" for r in records),
        rollouts=len(set(seeds.values())),
        crowd=crowd[0] if crowd is not None else None,
        minus_crowd=minus,
        **ceiling_of(task, items, known, found, resampler),
    )
    return figure, noise


def simulator_rollouts(
    runs: Runs,
    seeds: Mapping[str, int],
    resampler: Resampler,
    variants: Mapping[str, str] | None = None,
) -> Rollouts:
    """Every task a simulator's rollouts answered (on `variants`' variant of it, where given)."""
    by_task: dict[str, list[ItemRecord]] = {}
    for record in runs.records:
        if record.model in seeds and (
            variants is None or variants.get(record.task) == record.variant
        ):
            by_task.setdefault(record.task, []).append(record)
    figures, noise = {}, {}
    for name, records in sorted(by_task.items()):
        task = task_object(name, runs.made_with(name))
        if task is not None:
            figures[name], noise[name] = rollout_figure(
                task, records, seeds, runs.conversations, resampler
            )
    return Rollouts(models=sorted(seeds, key=seeds.__getitem__), figures=figures, noise_floor=noise)


def rollouts(
    runs: Runs,
    bootstrap: ClusterBootstrap,
    conversations: Sequence[str],
    variants: Mapping[str, str],
) -> dict[str, Rollouts]:
    """The report's section: every simulator run once per seed, on each task's headline
    variant, on the report's resamples (`conversations`: the codes its bootstrap knows)."""
    resampler = Resampler(bootstrap, {cid: i for i, cid in enumerate(conversations)})
    return {
        name: simulator_rollouts(runs, seeds, resampler, variants)
        for name, seeds in sorted(rollout_seeds(runs).items())
    }
