"""The replay's figures: per task, the headline of the simulated person's answers against the
person's own, beside the crowd's and, where retest probes measured it, the person's ceiling.

- The headline is the task's declared headline metric over every rollout's records together
  (each rollout an item more of its conversation, so the interval resamples conversations).
- The crowd reference is the task's declared one (`Scoring.crowd`): the answer most usual at the
  item's point of a conversation, fitted out of sample as the report fits it (cross-fitted by
  conversation: `tasks.helpers.fitting`), and read as the report reads it: within each fold,
  averaged over the folds. Read across folds, each fold's guess is the usual answer of the other
  folds, which leans away from the fold's own answers within a position cell, and the
  position-adjusted headline of an answer that ignores the item fell to -0.707 (outcome) and
  -0.569 (rating) on 20 conversations of open-v1, where within folds it is 0. It is scored
  with the same metric on the same items and resamples; `minus_crowd` is the simulator's
  headline minus the crowd's, with its interval, and marked as noise where it is within the
  simulator's run-to-run spread.
- `ceiling` is the person's own retest agreement: the task's headline applied to their repeat
  answers as predictions of their first ones (`analysis.references.ceiling`, read from the
  conversations' retest probes); `share_of_ceiling` = (score - chance) / (ceiling - chance), with
  the task's chance (`Scoring.chance`), its interval from the same resamples of both
  (`analysis.references.ceiling.share`).
  Where the data has no retest probes both are null, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import expanded_confidence
from attunebench.analysis.references.ceiling import Ceiling, repeat_views, share
from attunebench.analysis.references.predictors import guessed_views
from attunebench.analysis.schema import Estimate, SelfConsistency
from attunebench.simulators.estimates import MIN_CLUSTERS, Resampled, Resampler
from attunebench.simulators.noise import noise_floor
from attunebench.simulators.replay import Replayed, rollout_of
from attunebench.simulators.schema import Crowd, NoiseFloor, ReplayFigure, unknown
from attunebench.tasks.base import Task, View
from attunebench.tasks.helpers.fitting import out_of_sample

NO_PROBES = "no retest probes in this data: the person's own ceiling is not measured"


def answered_views(replayed: Replayed) -> list[View[Any, Any]]:
    """Every rollout's record read into the task's types, failed calls left out (counted)."""
    return [replayed.task.scoring.view(r) for r in replayed.records if r.status != "failed"]


def rollout_noise(replayed: Replayed) -> NoiseFloor:
    """The headline in each rollout, and its spread."""
    metric = replayed.task.scoring.metric()
    views = answered_views(replayed)
    values = [
        metric.value([v for v in views if rollout_of(v.record) == rollout])
        for rollout in replayed.rollouts()
    ]
    note = None
    if len(values) == 1:
        note = "one rollout: choice answers on real data are the same in every rollout"
    return noise_floor(values, note)


def crowd_of(
    task: Task[Any, Any], views: Sequence[View[Any, Any]], resampler: Resampler
) -> tuple[Crowd, Resampled] | None:
    """The crowd reference's headline on the items (one view each), or None where the task
    declares none."""
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
    replayed: Replayed, found: Resampled, resampler: Resampler
) -> tuple[Estimate, Estimate, float | None] | None:
    """The people's own ceiling on the task, the simulator's share of it and the task's chance;
    None where no retest probe re-asks the task's items."""
    task = replayed.task
    conversations = list(
        {item.conversation.id: item.conversation for item in replayed.items}.values()
    )
    repeats = repeat_views(task, conversations)
    if not repeats:
        return None
    agreement = resampler.metric(task.scoring.metric(), repeats)
    ceiling = resampler.estimate(agreement)
    chance = task.scoring.chance([item.gold for item in replayed.items])
    if chance is None:
        return ceiling, unknown("the task declares no chance level"), chance
    if np.isnan(found.point):
        return ceiling, unknown("the simulator's headline is undefined"), chance
    entry = SelfConsistency(
        metric=task.scoring.headline_metric,
        value=ceiling.value,
        ci_low=ceiling.ci_low,
        ci_high=ceiling.ci_high,
        chance=chance,
        n=len(repeats),
        n_conversations=agreement.clusters,
    )
    clusters = min(found.clusters, agreement.clusters)
    enough = clusters >= MIN_CLUSTERS and ceiling.ci_low is not None
    level = expanded_confidence(resampler.bootstrap.confidence, clusters) if enough else None
    measured = Ceiling(entry, agreement.samples, agreement.clusters)
    shown = share(found.point, found.samples, measured, chance, level)
    return ceiling, Estimate(**shown.model_dump()), chance


def replay_figure(replayed: Replayed, resampler: Resampler, noise: NoiseFloor) -> ReplayFigure:
    task = replayed.task
    metric = task.scoring.metric()
    views = answered_views(replayed)
    found = resampler.metric(metric, views)
    first = [v for v in views if rollout_of(v.record) == replayed.rollouts()[0]]
    crowd = crowd_of(task, first, resampler)
    minus = None
    if crowd is not None:
        minus = resampler.difference(found.minus(crowd[1]), noise.spread)
    ceiling = ceiling_of(replayed, found, resampler)
    return ReplayFigure(
        **resampler.estimate(found).model_dump(),
        metric=metric.name,
        description=metric.description,
        n_items=len(replayed.items),
        n_conversations=len({item.conversation.id for item in replayed.items}),
        n_invalid=sum(r.status == "invalid" for r in replayed.records),
        n_failed=sum(r.status == "failed" for r in replayed.records),
        rollouts=len(replayed.rollouts()),
        crowd=crowd[0] if crowd is not None else None,
        minus_crowd=minus,
        ceiling=ceiling[0] if ceiling else None,
        chance=ceiling[2] if ceiling else None,
        share_of_ceiling=ceiling[1] if ceiling else None,
        ceiling_reason=None if ceiling else NO_PROBES,
    )


def replay_figures(
    replayed: Sequence[Replayed], resampler: Resampler
) -> tuple[dict[str, ReplayFigure], dict[str, NoiseFloor]]:
    """Each task's figure, and the noise floor of each task's headline."""
    noise = {r.task.name: rollout_noise(r) for r in replayed}
    figures = {r.task.name: replay_figure(r, resampler, noise[r.task.name]) for r in replayed}
    return figures, noise
