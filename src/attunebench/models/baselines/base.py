"""What every baseline shares: the provider protocol, seeded randomness, the answer JSON.

A baseline never reads the prompt; it answers from the `TaskHint` and must write exactly the
JSON a task asks an LLM for (see `models/hints.py`), so one strict parser reads every provider.
The hint kinds a baseline has an honest answer for are its `supported_hints`: a plan leaves
out the (task, model) pairs needing any other kind, and a call for one anyway is a
non-retryable `ProviderError`, never an answer.
"""

from __future__ import annotations

import hashlib
import json
import time
from abc import abstractmethod
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from attunebench.answerform import labelled_scale
from attunebench.data.derived import FIVE
from attunebench.data.jsonl import canonical_json
from attunebench.data.taxonomy import normalise_label
from attunebench.models.base import (
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    ProviderError,
)
from attunebench.models.baselines.train import TrainSet
from attunebench.models.hints import HintKind, TaskHint
from attunebench.models.registry import ProviderConfigError

# Hint kinds that ask which of two replies (A, B) this participant would rather have.
PAIR_KINDS: tuple[HintKind, ...] = ("preference", "judge_pairwise")
# What every baseline answers except `longer`: the labelling tasks and a pick between replies.
LABEL_AND_PAIR_KINDS: frozenset[HintKind] = frozenset({"emotion", "behavior", *PAIR_KINDS})
# Names a label set may give to "no particular emotion", in order of preference.
NEUTRAL_NAMES = ("neutral", "none", "no emotion", "calm")


class Baseline(NamedProvider):
    """A provider that answers from the hint alone. Subclasses implement `answer`."""

    # The hint kinds `answer` handles; None means all of them.
    supported_hints: frozenset[HintKind] | None = None
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
        if hint is None:
            raise ProviderError(
                f"{self.spec} answers from a TaskHint and got none", retryable=False
            )
        if not self.answers(hint.kind):  # a plan leaves these out; a direct call gets this
            raise self.unsupported(hint)
        started = time.perf_counter()
        text = await self.answer(hint, params)
        return ModelOutput(text=text, latency_s=time.perf_counter() - started, finish_reason="stop")

    @abstractmethod
    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        """The answer text for one item, in the JSON its hint kind expects."""

    async def aclose(self) -> None:
        return None

    def unsupported(self, hint: TaskHint) -> ProviderError:
        message = f"{self.spec} has no answer for {hint.kind!r} items"
        if self.supported_hints is None or hint.kind in self.supported_hints:
            message += f": {self.unsupported_reason(hint.kind)}"  # e.g. no such gold in train
        return ProviderError(message, retryable=False)


def item_rng(seed: int, hint: TaskHint) -> np.random.Generator:
    """A generator fixed by (seed, item): the same item always gets the same draw.

    Hints without an item key fall back to their content, so they stay deterministic too.
    """
    address: object = hint.item_key or [hint.kind, hint.text, hint.candidates, hint.labels]
    digest = hashlib.sha256(canonical_json([seed, hint.kind, address]).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def map_label(raw: str, labels: tuple[str, ...]) -> str | None:
    """A label from another label set (a train split, a lexicon) as this item names it."""
    return normalise_label(raw, labels)


def first_present(candidates: Iterable[str], labels: tuple[str, ...]) -> str | None:
    for candidate in candidates:
        found = map_label(candidate, labels)
        if found is not None:
            return found
    return None


def require_labels(hint: TaskHint, spec: str) -> tuple[str, ...]:
    if not hint.labels:
        raise ProviderError(f"{spec}: the {hint.kind!r} hint carries no labels", retryable=False)
    return hint.labels


def emotion_answer(
    primary: str,
    emotions: Iterable[str] = (),
    *,
    intensity: float | None = None,
    valence: float | None = None,
    arousal: float | None = None,
) -> str:
    """The emotion JSON; numbers a baseline cannot estimate are left out, never invented."""
    listed = [primary, *(e for e in emotions if e != primary)]
    answer: dict[str, object] = {"primary": primary, "emotions": listed}
    for key, value in (("intensity", intensity), ("valence", valence), ("arousal", arousal)):
        if value is not None:
            answer[key] = round(float(value), 3)
    return json.dumps(answer)


def behavior_answer(behaviors: Iterable[str]) -> str:
    return json.dumps({"behaviors": list(behaviors)})


def choice_answer(choice: str) -> str:
    return json.dumps({"choice": choice})


def pairwise_answer(winner: str, reason: str) -> str:
    return json.dumps({"winner": winner, "reason": reason})


def pick_answer(hint: TaskHint, choice: str, reason: str) -> str:
    """A preference choice, or the same pick as a pairwise judge's verdict."""
    return (
        pairwise_answer(choice, reason) if hint.kind == "judge_pairwise" else choice_answer(choice)
    )


def rating_answer(rating: float) -> str:
    return json.dumps({"rating": round(float(rating), 3)})


def outcome_answer(values: dict[str, float]) -> str:
    return json.dumps({name: round(float(value), 3) for name, value in values.items()})


def rating_scale(hint: TaskHint) -> tuple[float, float]:
    """The rating item's scale (low, high), from the hint's labels; 1-5 for a hint made by hand
    that carries none (the scale the rating task assumes where a source states none)."""
    return labelled_scale(hint) or FIVE


def fit_on_scale(
    values: Sequence[float], scale: tuple[float, float], fit: Callable[[Sequence[float]], float]
) -> float:
    """`fit` (a median, a mean) of the train values given on `scale` (the caller keeps only
    those), kept within it; where none was (a scale the train split never showed) the scale's
    midpoint. A value learned on another scale says nothing about this one (a 4 of 1-5 is not
    a thumb on 0-1, and clipping it would answer the top of the scale); the midpoint is a valid
    answer that is never more than half the scale off."""
    low, high = scale
    if not values:
        return (low + high) / 2
    return min(max(float(fit(values)), low), high)


def outcome_scales(hint: TaskHint) -> dict[str, tuple[float, float]]:
    """Each outcome field asked, with its scale ("low:high" in the hint's reference)."""
    scales = {}
    for name in hint.labels:
        low, _, high = hint.reference.get(name, "1:5").partition(":")
        scales[name] = (float(low), float(high))
    return scales


class Fitted(Baseline):
    """A baseline fitted on a train split: it answers the kinds whose gold the split holds,
    and refuses a split that overlaps the evaluated data (gold would leak into answers)."""

    train: TrainSet

    def answers(self, kind: HintKind) -> bool:
        return super().answers(kind) and self.train.has_gold(kind)

    def unsupported_reason(self, kind: HintKind) -> str:
        if super().answers(kind):
            return f"{self.spec}: train split {self.train.path} has no {kind} gold"
        return super().unsupported_reason(kind)

    def check_data(self, conversation_ids: frozenset[str], dataset: Path) -> None:
        if Path(self.train.path).resolve() == dataset.resolve():
            raise ProviderConfigError(f"{self.spec}: the train split is the evaluated data")
        shared = self.train.conversation_ids & conversation_ids
        if shared:
            example = sorted(shared)[0]
            raise ProviderConfigError(
                f"{self.spec}: train split {self.train.path} shares {len(shared)} conversation "
                f"ids with the evaluated data (e.g. {example!r}): fit on a disjoint split"
            )


def candidate_pair(hint: TaskHint, spec: str) -> tuple[str, str]:
    """The A and B texts of a preference or pairwise hint."""
    try:
        return hint.candidates["A"], hint.candidates["B"]
    except KeyError:
        raise ProviderError(
            f"{spec}: the {hint.kind!r} hint needs candidates 'A' and 'B'", retryable=False
        ) from None


def seed_of(params: GenerateParams, default: int) -> int:
    """The run's seed when the request carries one, else the baseline's own."""
    return default if params.seed is None else params.seed
