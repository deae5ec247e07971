"""`baseline/random`: uniform guesses, fixed by (seed, item), the floor every model must beat.

The guess is the random valid answer the task's own form draws. An item and its person-hidden
twin are one item to it (`base.item_rng`), so its person gap is exactly 0: drawn afresh, the
twins' noise read as a gap (-0.079 [-0.150, +0.003] on open-v1-mini's emotion). A reply is one
of a few generic supportive sentences that ignore what was said, so a judge that rates them
well is not measuring attunement.
"""

from __future__ import annotations

from attunebench.answerform import TaskHint
from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.baselines.base import Baseline, item_rng


class RandomOptions(Frozen):
    seed: int = 0


class RandomBaseline(Baseline):
    """Every form: each task's form can draw a valid answer."""

    def __init__(self, spec: str, options: RandomOptions) -> None:
        super().__init__(spec)
        self.options = options

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        assert hint.form is not None  # `Baseline.generate` refuses a hint without one
        seed = self.options.seed if params.seed is None else params.seed  # the run's, if set
        rng = item_rng(seed, hint)
        try:
            return hint.form.random(hint, rng)
        except ValueError as error:  # the hint lacks what the form draws from (its labels)
            raise ProviderError(f"{self.spec}: {error}", retryable=False) from None
