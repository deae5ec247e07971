"""`baseline/random`: uniform guesses, fixed by (seed, item), the floor every model must beat.

- emotion: a primary label uniform over the item's labels (emotions = [primary]); intensity
  uniform on 1..5, valence on [-1, 1], arousal on [0, 1].
- behavior: one label, uniform over the item's labels.
- preference: A or B with equal chance (never a tie).
- response: one of a few fixed, generic supportive sentences, uniformly. It is a baseline reply
  that ignores what was said, so a judge that rates it well is not measuring attunement.
- judge_pairwise: A or B uniformly; judge_rubric: a score uniform on 1..10 (a null judge).
"""

from __future__ import annotations

from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams
from attunebench.models.baselines.base import (
    Baseline,
    behavior_answer,
    choice_answer,
    emotion_answer,
    item_rng,
    outcome_answer,
    outcome_scales,
    pairwise_answer,
    rating_answer,
    rating_scale,
    require_labels,
    rubric_answer,
    seed_of,
)
from attunebench.models.hints import TaskHint

CANNED_REPLIES = (
    "That sounds really hard. I'm here to listen if you want to say more.",
    "Thank you for telling me. How are you feeling about it right now?",
    "It makes sense that you feel this way. What would help most at the moment?",
    "I'm sorry you're going through this. You don't have to face it alone.",
    "That's a lot to carry. Would you like to talk through what happened?",
)


class RandomOptions(Frozen):
    seed: int = 0


class RandomBaseline(Baseline):
    supported_hints = None  # every kind: a guess is always possible

    def __init__(self, spec: str, options: RandomOptions) -> None:
        super().__init__(spec)
        self.options = options

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        rng = item_rng(seed_of(params, self.options.seed), hint)
        if hint.kind == "emotion":
            labels = require_labels(hint, self.spec)
            primary = labels[int(rng.integers(len(labels)))]
            return emotion_answer(
                primary,
                intensity=float(rng.integers(1, 6)),
                valence=float(rng.uniform(-1.0, 1.0)),
                arousal=float(rng.uniform(0.0, 1.0)),
            )
        if hint.kind == "behavior":
            labels = require_labels(hint, self.spec)
            return behavior_answer([labels[int(rng.integers(len(labels)))]])
        if hint.kind == "preference":
            return choice_answer("AB"[int(rng.integers(2))])
        if hint.kind == "response":
            return CANNED_REPLIES[int(rng.integers(len(CANNED_REPLIES)))]
        if hint.kind == "judge_pairwise":
            return pairwise_answer("AB"[int(rng.integers(2))], "baseline/random: a coin flip")
        if hint.kind == "judge_rubric":
            return rubric_answer(int(rng.integers(1, 11)), "baseline/random: a uniform score")
        if hint.kind == "rating":
            low, high = rating_scale(hint, self.spec)
            return rating_answer(float(rng.integers(int(low), int(high) + 1)))
        if hint.kind == "outcome":
            return outcome_answer(
                {
                    name: float(rng.integers(int(low), int(high) + 1))
                    for name, (low, high) in outcome_scales(hint).items()
                }
            )
        raise self.unsupported(hint)
