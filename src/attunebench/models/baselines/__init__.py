"""Baselines that need no language model: `baseline/NAME`, options as keywords or a query
(`baseline/knn?train=train.jsonl&k=3`, which fits on a command line and keeps the options in
the spec that run.json and reports show).

| name       | options                         | what it answers                          |
|------------|---------------------------------|------------------------------------------|
| `random`   | `seed` (default 0)              | uniform guesses, fixed by (seed, item)   |
| `majority` | `train` (required)              | the train split's usual answer           |
| `longer`   | none                            | the longer reply (length-bias reference) |
| `lexicon`  | none                            | NRC emotion words, VADER sentiment       |
| `knn`      | `train` (required), `k`, `encoder` | the k nearest train examples, combined |"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from attunebench.answerform import FIRST, SECOND, TIE, AnswerForm, HintKind, TaskHint, pair_gold
from attunebench.frozen import Frozen
from attunebench.models.base import Example, GenerateParams, ProviderError
from attunebench.models.baselines.base import Baseline, Fitted, item_rng, person_hidden
from attunebench.models.baselines.knn import KnnBaseline, KnnOptions
from attunebench.models.baselines.lexicon import LexiconBaseline
from attunebench.models.registry import PROVIDERS, ProviderConfigError, SpecError, spec_options
from attunebench.registry import Registry

__all__ = ["KnnBaseline", "RandomBaseline", "RandomOptions"]  # what callers import from here

# Each baseline's options, and what makes it from its spec and those options.
BASELINES: Registry[tuple[type[Frozen], Callable[[str, Any], Baseline]]] = Registry("baseline")


class RandomOptions(Frozen):
    seed: int = 0


class RandomBaseline(Baseline):
    """The random valid answer the task's own form draws, every form. An item and its
    person-hidden twin are one item to it (`base.item_rng`), so its person gap is exactly 0:
    drawn afresh, the twins' noise read as a gap (-0.079 [-0.150, +0.003] on open-v1-mini's
    emotion). A reply is one of a few generic supportive sentences that ignore what was said,
    so a judge that rates them well is not measuring attunement."""

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


class MajorityOptions(Frozen):
    train: Path


class MajorityBaseline(Fitted):
    """Every train example asking the item's question gives its gold, and the answer is
    `from_gold` of the gold that `combine`s them all (the most frequent label, the mean of each
    number, the reply more often preferred). It reads nothing of the item, so it is one answer
    per question, worked out once."""

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
        key = (hint.kind, (form.question(hint), person_hidden(hint)))
        if key not in self._golds:  # the combined gold is the same for every item asking it
            examples = self.examples[hint.kind]
            self._golds[key] = form.combine([examples[i].gold for i in self.alike(hint)])
        gold = form.shown(hint, self._golds[key])
        return form.from_gold(hint, gold, True, item_rng(0, hint))


def longer_of(first: str, second: str) -> str:
    """FIRST, SECOND or TIE: the place of the longer of two replies, by characters."""
    if len(first) == len(second):
        return TIE
    return FIRST if len(first) > len(second) else SECOND


class LongerBaseline(Baseline):
    """The length bias known from LLM judges, in every form that picks between two replies
    (`AnswerForm.pairs`): a preference, and a pairwise judge's verdict, so a judge audit can
    compare a judge with it. Equal lengths: a tie."""

    def answers_form(self, form: AnswerForm) -> bool:
        return form.pairs

    def unsupported_reason(self, kind: str) -> str:
        return f"{self.spec} picks between two replies, and {kind!r} items offer none"

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        assert hint.form is not None
        shown_a, shown_b = hint.form.reads(hint)
        gold = hint.form.shown(hint, pair_gold(longer_of(shown_a, shown_b)))
        return hint.form.from_gold(hint, gold, True, item_rng(0, hint))


class NoOptions(Frozen):
    """No options at all."""


def _longer(spec: str, _: NoOptions) -> Baseline:
    return LongerBaseline(spec)


def _lexicon(spec: str, _: NoOptions) -> Baseline:
    if importlib.util.find_spec("vaderSentiment") is None:
        raise ProviderConfigError(
            f"{spec} needs VADER, of the `lexicon` extra: pip install 'attunebench[lexicon]'"
        )
    if importlib.util.find_spec("nrclex") is None:
        raise ProviderConfigError(
            f"{spec} needs the NRC emotion lexicon: pip install --no-deps 'nrclex>=4.1,<5'"
        )
    return LexiconBaseline(spec)


BASELINES.register("random")((RandomOptions, RandomBaseline))
BASELINES.register("majority")((MajorityOptions, MajorityBaseline))
BASELINES.register("longer")((NoOptions, _longer))
BASELINES.register("lexicon")((NoOptions, _lexicon))
BASELINES.register("knn")((KnnOptions, KnnBaseline))


@PROVIDERS.register("baseline")
def make_baseline(model: str, **options: Any) -> Baseline:
    """The baseline `model` names (`knn` or `knn?train=FILE&k=3`), with keyword options."""
    name, _, query = model.partition("?")
    spec = f"baseline/{model}"
    from_query = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    clash = sorted(set(from_query) & set(options))
    if clash:
        raise SpecError(f"model spec {spec!r}: option {clash[0]!r} given twice")
    try:
        kind, make = BASELINES.get(name)
    except KeyError as error:
        raise SpecError(f"model spec {spec!r}: {error}") from None
    return make(spec, spec_options(kind, spec, {**from_query, **options}))
