"""What every baseline shares: the provider protocol, seeded randomness, and what a fitted
baseline learns from.

A baseline never reads the prompt: it answers from the `TaskHint` through the hint's answer
form, so it writes the JSON a task asks an LLM for and names no task. A fitted baseline
(`Fitted`) learns from a train split (`train=FILE`, disjoint from the evaluated data), whose
examples the engine builds as the run's tasks build their items (`engine.training`)."""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path

import numpy as np

from attunebench.answerform import AnswerForm, HintKind, TaskHint
from attunebench.data.jsonl import canonical_json
from attunebench.data.taxonomy import normalise_label
from attunebench.models.base import (
    Example,
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    ProviderError,
    keyed_rng,
)
from attunebench.models.registry import ProviderConfigError

# Names a label set may give to "no particular emotion", in order of preference.
NEUTRAL_NAMES = ("neutral", "none", "no emotion", "calm")


class Baseline(NamedProvider):
    """A provider that answers from the hint alone. Subclasses implement `answer`."""

    # Never cached. A fitted baseline's answers follow the train file's contents, which the
    # cache key does not see (it holds the spec and options, so the file's path), and the
    # others' follow the code and the lexicon. Hashing the train file would close only the
    # first gap, while caching saves next to nothing: every baseline answers an item in
    # milliseconds. knn's one costly step, embedding the train split, is kept apart, keyed by
    # the texts themselves (`prepare`, `embeddings.encode_stored`).
    cacheable = False

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        if hint is None or hint.form is None:
            what = "a TaskHint" if hint is None else f"an answer form on its {hint.kind!r} hint"
            raise ProviderError(f"{self.spec} answers from {what} and got none", retryable=False)
        if not self.answers_form(hint.form):  # a plan leaves these out; a direct call gets this
            raise ProviderError(self.unsupported_reason(hint.kind), retryable=False)
        started = time.perf_counter()
        text = await self.answer(hint, params)
        return ModelOutput(text=text, latency_s=time.perf_counter() - started, finish_reason="stop")

    @abstractmethod
    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        """The answer text for one item, in the JSON its form expects."""


# How a person-hidden twin's variant ends (`tasks.helpers.twins.PERSON_HIDDEN`; a provider
# imports no task): its item key is its item's but for this mark.
PERSON_HIDDEN = "person-hidden"


def _shown_part(part: str) -> str:
    if part == PERSON_HIDDEN:
        return ""
    return part.removesuffix("+" + PERSON_HIDDEN)


def shown_key(item_key: str) -> str:
    """The item key with a person-hidden twin's mark taken out of its variant: what an item
    and its twin share (the same task, conversation, turn, item, context and query).

    >>> shown_key("emotion|c1|2|turn|informed+person-hidden|answer")
    'emotion|c1|2|turn|informed|answer'
    """
    return "|".join(_shown_part(part) for part in item_key.split("|"))


def person_hidden(hint: TaskHint) -> bool:
    """Whether the hint asks a person-hidden twin (`tasks.helpers.twins`)."""
    return shown_key(hint.item_key) != hint.item_key


def item_rng(seed: int, hint: TaskHint) -> np.random.Generator:
    """A generator fixed by (seed, item): the same item always gets the same draw, and so does
    its person-hidden twin, whose key differs only by the twin's mark (`shown_key`), so that a
    baseline drawing from it ignores the person exactly.

    Hints without an item key fall back to their content, so they stay deterministic too."""
    address: object = shown_key(hint.item_key) or [
        hint.kind,
        hint.text,
        hint.candidates,
        hint.labels,
    ]
    return keyed_rng(canonical_json([seed, hint.kind, address]))


def first_present(candidates: Iterable[str], labels: tuple[str, ...]) -> str | None:
    """The first candidate (from a lexicon, say) that the item's labels name."""
    for candidate in candidates:
        found = normalise_label(candidate, labels)
        if found is not None:
            return found
    return None


class Fitted(Baseline):
    """A baseline fitted on a train split's examples (see the module docstring)."""

    def __init__(self, spec: str, train: Path) -> None:
        super().__init__(spec)
        if not train.is_file():
            raise ProviderConfigError(f"{spec}: train split {train} does not exist")
        self.train = train
        self.examples: dict[HintKind, list[Example]] = {}
        self._alike: dict[tuple[HintKind, Hashable], list[int]] = {}

    @property
    def learns_from(self) -> Path:
        return self.train

    def learn(self, examples: Sequence[Example]) -> None:
        self.examples, self._alike = {}, {}
        for example in examples:
            self.examples.setdefault(example.hint.kind, []).append(example)

    def answers_form(self, form: AnswerForm) -> bool:
        """A form whose gold's answer can be written, with an example in the train split."""
        return form.gold_answers and bool(self.examples.get(form.kind))

    def unsupported_reason(self, kind: HintKind) -> str:
        return f"{self.spec}: train split {self.train} has no item asking {kind!r} questions"

    def alike(self, hint: TaskHint) -> list[int]:
        """The examples of the hint's kind asking its question (their places), found once: for
        a person-hidden twin, the train items' twins, so that it learns from what it reads."""
        assert hint.form is not None
        question = hint.form.question(hint)
        hidden = person_hidden(hint)
        key = (hint.kind, (question, hidden))
        found = self._alike.get(key)
        if found is None:
            examples = self.examples.get(hint.kind, [])
            found = [
                i
                for i, e in enumerate(examples)
                if person_hidden(e.hint) == hidden and hint.form.question(e.hint) == question
            ]
            self._alike[key] = found
        if not found:
            twins = " with the person hidden" if hidden else ""
            raise ProviderError(
                f"{self.spec}: train split {self.train} has no {hint.kind!r} item{twins} asking "
                f"this question ({question!r})",
                retryable=False,
            )
        return found

    def written(
        self, hint: TaskHint, chosen: Sequence[int], weights: Sequence[float] | None = None
    ) -> str:
        """The answer to `hint` of the gold combining the chosen examples' golds (each as
        its own query showed it, the combined one shown as this hint's query shows it)."""
        form = hint.form
        assert form is not None
        examples = self.examples[hint.kind]
        gold = form.combine([examples[i].gold for i in chosen], weights)
        return form.from_gold(hint, form.shown(hint, gold), True, item_rng(0, hint))
