"""`baseline/majority` and `baseline/longer`: constant answers learned from, or fixed by, rule.

`baseline/majority` needs a train split (`train=FILE`, disjoint from the evaluated data) and
always gives the answer most frequent there:

- emotion: the most frequent primary label that belongs to the item's label set (ties go to
  the label listed first); intensity the train median, valence and arousal the train means.
- behavior: every label carried by at least half the train replies, or if none is, the single
  most frequent label (a multi-label majority).
- preference: the position of a reply says nothing (tasks shuffle A and B), so the majority is
  taken over length: whether participants more often chose the longer or the shorter reply;
  it then picks that one (equal lengths: tie). As a pairwise judge it picks the same way.
- rating: the train median feedback on the item's scale; outcome: each field's train median
  on its scale. Scales are kept apart (ConvAI1's 0-1 thumbs against 1-5 ratings elsewhere):
  one pooled median answered 4 to thumbs, off their scale. A scale the train split never
  showed is answered with its midpoint (`base.fit_on_scale` says why).
- response and rubric judging: not answered (not in `supported_hints`: a plan leaves them out).

A kind whose gold the train split lacks is left out by the plan (not applicable).

`baseline/longer` always prefers the longer reply, the length bias known from LLM judges; it
answers preference and pairwise-judge items, so a judge audit can compare a judge with it.
"""

from __future__ import annotations

import functools
import statistics
from collections import Counter
from pathlib import Path

from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.baselines import base
from attunebench.models.baselines.train import TrainSet, load_train_set
from attunebench.models.hints import TaskHint


class MajorityOptions(Frozen):
    train: Path


def longer_of(a: str, b: str, *, prefer_longer: bool = True) -> str:
    """`A`, `B` or `tie`: the longer (or shorter) of two replies, by characters."""
    if len(a) == len(b):
        return "tie"
    return "A" if (len(a) > len(b)) == prefer_longer else "B"


class MajorityBaseline(base.Fitted):
    supported_hints = base.LABEL_AND_PAIR_KINDS | {"rating", "outcome"}

    def __init__(self, spec: str, options: MajorityOptions) -> None:
        super().__init__(spec)
        self.options = options
        self.train: TrainSet = load_train_set(options.train)
        # The answer is constant per label set, so it is computed once for each.
        self._answers: dict[tuple[str, tuple[str, ...]], str] = {}

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        if hint.kind in base.PAIR_KINDS:
            a, b = base.candidate_pair(hint, self.spec)
            choice = longer_of(a, b, prefer_longer=self.longer_wins())
            return base.pick_answer(
                hint, choice, "baseline/majority: the length chosen more in train"
            )
        if hint.kind == "rating":
            scale = base.rating_scale(hint)
            key = ("rating", tuple(f"{end:g}" for end in scale))
            if key not in self._answers:  # one median per scale, not one per item
                ratings = [e.rating for e in self.train.rating if e.scale == scale]
                median = base.fit_on_scale(ratings, scale, statistics.median)
                self._answers[key] = base.rating_answer(median)
            return self._answers[key]
        if hint.kind == "outcome":
            return base.outcome_answer(self._outcome(base.outcome_scales(hint)))
        if hint.kind not in ("emotion", "behavior"):
            raise self.unsupported(hint)
        labels = base.require_labels(hint, self.spec)
        key = (hint.kind, labels)
        if key not in self._answers:
            self._answers[key] = (
                self._emotion(labels)
                if hint.kind == "emotion"
                else base.behavior_answer(self._behaviors(labels))
            )
        return self._answers[key]

    def _emotion(self, labels: tuple[str, ...]) -> str:
        examples = self.train.emotion
        counts = Counter(
            label for e in examples if (label := base.map_label(e.primary, labels)) is not None
        )
        if not counts:
            raise self._no_gold("emotion labels from this item's label set")
        primary = max(labels, key=lambda label: counts[label])  # max keeps the first of ties
        intensities = [e.intensity for e in examples if e.intensity is not None]
        valences = [e.valence for e in examples if e.valence is not None]
        arousals = [e.arousal for e in examples if e.arousal is not None]
        return base.emotion_answer(
            primary,
            intensity=statistics.median(intensities) if intensities else None,
            valence=statistics.fmean(valences) if valences else None,
            arousal=statistics.fmean(arousals) if arousals else None,
        )

    def _outcome(self, scales: dict[str, tuple[float, float]]) -> dict[str, float]:
        """Each field asked: its train median among the values given on the same scale."""
        found = {}
        for name, scale in scales.items():
            values = [
                e.values[name]
                for e in self.train.outcome
                if name in e.values and e.scales.get(name, scale) == scale
            ]
            found[name] = base.fit_on_scale(values, scale, statistics.median)
        return found

    def _behaviors(self, labels: tuple[str, ...]) -> list[str]:
        label_sets = [
            {m for b in e.behaviors if (m := base.map_label(b, labels)) is not None}
            for e in self.train.behavior
        ]
        label_sets = [s for s in label_sets if s]
        if not label_sets:
            raise self._no_gold("behavior labels from this item's label set")
        counts = Counter(label for s in label_sets for label in s)
        common = [label for label in labels if 2 * counts[label] >= len(label_sets)]
        return common or [max(labels, key=lambda label: counts[label])]

    @functools.cached_property
    def _length_votes(self) -> tuple[int, int]:
        longer = shorter = 0
        for example in self.train.preference:
            for rejected in example.rejected:
                if len(example.chosen) > len(rejected):
                    longer += 1
                elif len(example.chosen) < len(rejected):
                    shorter += 1
        return longer, shorter

    def longer_wins(self) -> bool:
        """Whether, in the train split, the chosen reply was more often the longer one."""
        longer, shorter = self._length_votes
        if longer + shorter == 0:
            raise self._no_gold("preferences between replies of different lengths")
        return longer >= shorter

    def _no_gold(self, what: str) -> ProviderError:
        return ProviderError(
            f"{self.spec}: train split {self.train.path} has no {what}", retryable=False
        )


class LongerBaseline(base.Baseline):
    """Prefers the longer reply, always."""

    supported_hints = frozenset(base.PAIR_KINDS)

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        if hint.kind in base.PAIR_KINDS:
            choice = longer_of(*base.candidate_pair(hint, self.spec))
            return base.pick_answer(hint, choice, "baseline/longer: the longer reply wins")
        raise self.unsupported(hint)
