"""The crowd reference of a replay scores 0 on a position-adjusted headline: its answer is the
answer usual at the item's point of a conversation, which ignores the item.

Cross-fitted, each fold's guess in a position cell is the mean of the other folds' answers
there, so it leans away from the fold's own (a fold whose people rated high is guessed low: a
leave-some-out mean is anti-correlated with what it leaves out). Within one fold the guess is
one value per cell, its residual 0, and so is its position-adjusted correlation, exactly, up
to rounding (hence the tolerance of 1e-9): the replay reads it there, as the report reads every
cross-fitted reference (`tasks.helpers.fitting`). Read across folds, or fitted leaving one
conversation out, the same answers score well below 0 on the planted people: the traps.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attunebench.analysis.comparisons.rollouts import answered_views, crowd_of
from attunebench.analysis.references.predictors import guessed_views
from attunebench.analysis.resampled import Resampler
from attunebench.data.validate import load_validated
from attunebench.models.modelsfile import ModelEntry
from attunebench.simulators import Plan, Sampling
from attunebench.simulators.replay import Replayed, read_replay, replay_tasks, rollout_of
from attunebench.simulators.session import open_session
from attunebench.tasks.base import Guess, View
from attunebench.tasks.helpers.fitting import out_of_sample

ADJUSTED = {"position_adjusted_r", "mean_adjusted_r"}  # the position-adjusted headlines
TOLERANCE = 1e-9  # 0 by construction (see the module docstring): only rounding is left


async def _replayed(data: Path, out: Path) -> list[Replayed]:
    """The person oracle's replay of the package's tasks headlined position-adjusted, run by
    the engine and read back from its run directory."""
    tasks = [
        t
        for t in replay_tasks()
        if t.scoring.headline_metric in ADJUSTED and type(t).__module__.startswith("attunebench.")
    ]
    entry = ModelEntry.from_spec("sim/person-oracle")
    plan = Plan(simulator=entry, data=(data,), out=out, sampling=Sampling(seeds=(0,)))
    async with open_session(plan) as session:
        await session.replay(tasks, data, out, None)
    return read_replay(out, tasks, load_validated(data), None)


def _leave_one_conversation_out(replayed: Replayed, views: list[View[Any, Any]]) -> list[Guess]:
    """The crowd's answer at each item fitted on every other conversation's items."""
    task = replayed.task
    assert task.scoring.crowd is not None
    reference = task.scoring.references()[task.scoring.crowd]
    assert reference.fit is not None
    guesses: list[Guess] = [None] * len(views)
    for held in {v.record.conversation_id for v in views}:
        mine = [i for i, v in enumerate(views) if v.record.conversation_id == held]
        fitted = reference.fit([v.gold for v in views if v.record.conversation_id != held])
        held_golds = [views[i].gold for i in mine]
        for i, guess in zip(mine, reference.guess(fitted, held_golds), strict=True):
            guesses[i] = guess
    return guesses


@pytest.fixture(scope="module")
def replayed(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Replayed]:
    return asyncio.run(_replayed(corpus, tmp_path_factory.mktemp("replay")))


def test_the_crowd_scores_zero_on_a_position_adjusted_headline(
    replayed: list[Replayed],
) -> None:
    assert {r.task.scoring.headline_metric for r in replayed} == ADJUSTED
    for found in replayed:
        task, metric = found.task, found.task.scoring.metric()
        views = [
            v
            for v in answered_views(task, found.records)
            if rollout_of(v.record) == found.rollouts()[0]
        ]
        ids = [v.record.conversation_id for v in views]
        resampler = Resampler.over(ids, 200, seed=0)
        crowd = crowd_of(task, views, resampler)
        assert crowd is not None and crowd[0].fit == "cross-fitted"
        assert crowd[0].value == pytest.approx(0.0, abs=TOLERANCE), task.name
        assert np.nanmax(np.abs(crowd[1].samples)) < TOLERANCE  # in every resample too
        # It guessed every item (an unanswered item also scores 0 here).
        assert task.scoring.crowd is not None
        reference = task.scoring.references()[task.scoring.crowd]
        fitted = out_of_sample(reference, [v.gold for v in views], ids)
        guessed, _ = guessed_views(views, fitted.guesses)
        assert len(guessed) == len(views)
        # The traps: the same guesses read across folds, and a leave-one-out crowd.
        across = resampler.metric(metric, guessed).point
        left_out, _ = guessed_views(views, _leave_one_conversation_out(found, views))
        alone = resampler.metric(metric, left_out).point
        assert across < -0.2 and alone < -0.2, (task.name, across, alone)
