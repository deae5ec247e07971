"""Distributional realism: what the simulated people said, against what the real people said
on the same conversations, each with a cluster-bootstrap interval.

`emotion_by_third` (self-label shares per third, total variation distance, negative share),
`intensity_change` and `negative_feedback_share`; each `value` is the simulator's minus the
people's. The simulator counts every rollout's answer, one more answer in the same
conversation; a difference within its run-to-run spread (`noise_floor`) is noise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from attunebench.analysis.comparisons.rollouts import noise_floor
from attunebench.analysis.resampled import Resampled, Resampler
from attunebench.analysis.schema import NoiseFloor
from attunebench.simulators.records import Continued, Graded, Sought
from attunebench.simulators.schema import (
    EmotionByThird,
    IntensityChange,
    LabelShares,
    NegativeFeedback,
)
from attunebench.simulators.seeker import FELL_ONLY
from attunebench.stats import FloatArray, Weights

THIRDS = (0, 1, 2)
NO_LABELLED = "no conversation whose writers labelled their own messages (first-person state)"
NO_VALENCE = "the taxonomy does not say which of its labels are negative"
NO_INTENSITIES = "no conversation with the person's own intensity before and after it"
NO_GRADES = "no conversation whose person graded the other side's messages (first-person rating)"


def _by_rollout(values: Sequence[float], rollouts: Sequence[int]) -> list[float | None]:
    """The mean of the values in each rollout, rollouts in order."""
    return [
        float(np.mean([v for v, r in zip(values, rollouts, strict=True) if r == rollout]))
        for rollout in sorted(set(rollouts))
    ]


def _shares(
    resampler: Resampler, labels: Sequence[str], ids: Sequence[str], names: list[str]
) -> tuple[FloatArray, FloatArray]:
    """Each label's share among these answers: the point (labels,) and every resample's
    (resamples, labels); NaN where a resample draws none of them (or there are none)."""
    if not labels:
        resamples = resampler.bootstrap.resamples
        return np.full(len(names), np.nan), np.full((resamples, len(names)), np.nan)
    onehot = np.array([[float(label == name) for name in names] for label in labels])
    onehot = onehot.reshape(len(labels), len(names))

    def of(weights: Weights) -> FloatArray:
        sums = weights.sum(onehot)
        total = sums.sum(axis=1, keepdims=True)
        return np.asarray(sums / np.where(total == 0, np.nan, total))

    codes = resampler.where(ids)
    return of(Weights.ones(len(codes)))[0], of(resampler.bootstrap.weights(codes))


def _rounded(names: Sequence[str], shares: FloatArray) -> dict[str, float]:
    return {name: round(float(s), 6) for name, s in zip(names, shares, strict=True) if s > 0}


def _third(
    resampler: Resampler, third: int, people: Sequence[Continued], simulated: Sequence[Continued]
) -> LabelShares:
    """One third's label shares, and their total variation distance."""
    named = {c.real_label for c in people} | {c.label for c in simulated}
    names = sorted(name for name in named if name)
    ours, ours_drawn = _shares(resampler, [c.real_label or "" for c in people], _ids(people), names)
    theirs, theirs_drawn = _shares(
        resampler, [c.label or "" for c in simulated], _ids(simulated), names
    )
    point = 0.5 * float(np.abs(ours - theirs).sum()) if people and simulated else np.nan
    drawn = 0.5 * np.abs(ours_drawn - theirs_drawn).sum(axis=1)
    clusters = len(set(_ids(people)) | set(_ids(simulated)))
    return LabelShares(
        third=third,
        n_people=len(people),
        n_simulator=len(simulated),
        people=_rounded(names, ours) if people else {},
        simulator=_rounded(names, theirs) if simulated else {},
        distance=resampler.estimate(Resampled(point, drawn, clusters)),
    )


def _ids(found: Sequence[Continued]) -> list[str]:
    return [c.written.conversation_id for c in found]


def emotion_by_third(
    continued: Sequence[Continued], resampler: Resampler
) -> tuple[EmotionByThird, NoiseFloor]:
    """The simulated writers' self-labels against the real writers' (see the module docstring)."""
    answered = [c for c in continued if c.label is not None]
    people = list(
        {(c.written.conversation_id, c.written.turn_index): c for c in continued}.values()
    )
    if not answered:
        reason = NO_LABELLED if not continued else "the simulator labelled none of its messages"
        return EmotionByThird(reason=reason), noise_floor([])
    thirds = [
        _third(
            resampler, t, [c for c in people if c.third == t], [c for c in answered if c.third == t]
        )
        for t in THIRDS
    ]
    sims = [c for c in answered if c.negative is not None]
    reals = [c for c in people if c.real_negative is not None]
    base = EmotionByThird(
        thirds=thirds,
        n_turns=len(people),
        n_conversations=len(set(_ids(people))),
    )
    if not sims or not reals:
        return base.model_copy(update={"reason": NO_VALENCE}), noise_floor([])
    simulator = resampler.mean([float(bool(c.negative)) for c in sims], _ids(sims))
    real = resampler.mean([float(bool(c.real_negative)) for c in reals], _ids(reals))
    noise = noise_floor(
        _by_rollout([float(bool(c.negative)) for c in sims], [c.written.rollout for c in sims])
    )
    difference = resampler.difference(simulator.minus(real), noise.spread)
    update = {
        **difference.model_dump(),
        "negative_people": resampler.estimate(real),
        "negative_simulator": resampler.estimate(simulator),
    }
    return base.model_copy(update=update), noise


def _distribution(changes: Sequence[float]) -> dict[str, int]:
    counted = Counter(f"{round(change, 1):+g}" for change in changes)
    return dict(sorted(counted.items(), key=lambda kv: float(kv[0])))


def intensity_change(
    sought: Sequence[Sought], resampler: Resampler, supporter: str, exchanges: int
) -> tuple[IntensityChange, NoiseFloor]:
    """The simulated seekers' change of intensity against the real seekers'."""
    answered = [s for s in sought if s.after is not None]
    people = list({s.conversation_id: s for s in sought}.values())
    base = IntensityChange(
        supporter=supporter, exchanges=exchanges, n_conversations=len(people), note=FELL_ONLY
    )
    if not answered:
        reason = NO_INTENSITIES if not sought else "the simulator reported no intensity"
        return base.model_copy(update={"reason": reason}), noise_floor([])
    real_changes = [s.real_after - s.before for s in people]
    changes = [float(s.after or 0.0) - s.before for s in answered]
    real = resampler.mean(real_changes, [s.conversation_id for s in people])
    simulator = resampler.mean(changes, [s.conversation_id for s in answered])
    noise = noise_floor(_by_rollout(changes, [s.rollout for s in answered]))
    difference = resampler.difference(simulator.minus(real), noise.spread)
    update = {
        **difference.model_dump(),
        "people": resampler.estimate(real),
        "simulator": resampler.estimate(simulator),
        "people_distribution": _distribution(real_changes),
        "simulator_distribution": _distribution(changes),
    }
    return base.model_copy(update=update), noise


def negative_feedback(
    graded: Sequence[Graded], resampler: Resampler
) -> tuple[NegativeFeedback, NoiseFloor]:
    """The share of the other side's messages graded down, the simulated people's and the real."""
    answered = [g for g in graded if g.grade is not None]
    people = list({(g.conversation_id, g.turn_index): g for g in graded}.values())
    if not answered:
        reason = NO_GRADES if not graded else "the simulator graded none of the messages"
        return NegativeFeedback(reason=reason), noise_floor([])
    downs = [float(g.grade is not None and g.grade < g.middle) for g in answered]
    real_downs = [float(g.real < g.middle) for g in people]
    simulator = resampler.mean(downs, [g.conversation_id for g in answered])
    real = resampler.mean(real_downs, [g.conversation_id for g in people])
    noise = noise_floor(_by_rollout(downs, [g.rollout for g in answered]))
    difference = resampler.difference(simulator.minus(real), noise.spread)
    return (
        NegativeFeedback(
            **difference.model_dump(),
            people=resampler.estimate(real),
            simulator=resampler.estimate(simulator),
            n_grades=len(answered),
            n_conversations=len({g.conversation_id for g in people}),
            by_source=_by_source(people, answered),
        ),
        noise,
    )


def _by_source(
    people: Sequence[Graded], answered: Sequence[Graded]
) -> dict[str, dict[str, float | int | None]]:
    """Each source's negative shares, people's and simulator's, and its graded messages."""

    def share(found: Sequence[Graded], real: bool) -> float | None:
        downs = [(g.real if real else g.grade or 0.0) < g.middle for g in found]
        return float(np.mean(downs)) if downs else None

    return {
        source: {
            "people": share([g for g in people if g.source == source], real=True),
            "simulator": share([g for g in answered if g.source == source], real=False),
            "n": sum(g.source == source for g in people),
        }
        for source in sorted({g.source for g in people})
    }
