"""`baseline/majority`: the answer usual in a train split to the same question.

Fitted on a train split (`train=FILE`): every example asking the item's question gives its
gold, and the answer is `from_gold` of the gold that `combine`s them all (the most frequent
label, the mean of each number, the reply more often preferred). It reads nothing of the item,
so it is one answer per question, worked out once.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from attunebench.answerform import HintKind, TaskHint
from attunebench.frozen import Frozen
from attunebench.models.base import Example, GenerateParams
from attunebench.models.baselines import base


class MajorityOptions(Frozen):
    train: Path


class MajorityBaseline(base.Fitted):
    def __init__(self, spec: str, options: MajorityOptions) -> None:
        super().__init__(spec, options.train)
        self.options = options
        self._golds: dict[tuple[HintKind, Hashable], dict[str, Any]] = {}

    def learn(self, examples: Sequence[Example]) -> None:
        super().learn(examples)
        self._golds = {}

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        assert hint.form is not None
        form = hint.form
        key = (hint.kind, (form.question(hint), base.person_hidden(hint)))
        if key not in self._golds:  # the combined gold is the same for every item asking it
            examples = self.examples[hint.kind]
            self._golds[key] = form.combine([examples[i].gold for i in self.alike(hint)])
        gold = form.shown(hint, self._golds[key])
        return form.from_gold(hint, gold, True, base.item_rng(0, hint))
