"""`baseline/longer`: the longer of two replies, always, the length bias known from LLM judges.

It answers every form that picks between two replies (`AnswerForm.pairs`): a preference, and a
pairwise judge's verdict, so a judge audit can compare a judge with it. Equal lengths: a tie."""

from __future__ import annotations

from attunebench.answerform import FIRST, SECOND, TIE, AnswerForm, TaskHint, pair_gold
from attunebench.models.base import GenerateParams
from attunebench.models.baselines import base


def longer_of(first: str, second: str) -> str:
    """FIRST, SECOND or TIE: the place of the longer of two replies, by characters."""
    if len(first) == len(second):
        return TIE
    return FIRST if len(first) > len(second) else SECOND


class LongerBaseline(base.Baseline):
    """Prefers the longer reply, always."""

    def answers_form(self, form: AnswerForm) -> bool:
        return form.pairs

    def unsupported_reason(self, kind: str) -> str:
        return f"{self.spec} picks between two replies, and {kind!r} items offer none"

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        assert hint.form is not None
        shown_a, shown_b = hint.form.reads(hint)
        gold = hint.form.shown(hint, pair_gold(longer_of(shown_a, shown_b)))
        return hint.form.from_gold(hint, gold, True, base.item_rng(0, hint))
