"""`proxy/minilm`: an offline stand-in for an LLM judge, scoring by sentence-embedding similarity.

It lets the whole pipeline, judge included, run with no keys and no network; reports label it
`proxy`. It reads the judge hint, never the prompt. With the participant's preferred and
rejected replies in the rubric, a reply c scores cos(c, chosen) - cos(c, rejected), clipped to
[-1, 1] and mapped onto 1..10. A pairwise hint carries no reference replies (one candidate
always is one, and would always win), so each candidate is scored by its similarity to the
participant's words about what they wanted, or else to the user's message; the higher wins.
It measures topical closeness, not tone, safety or care."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from attunebench.answerform import HintKind, TaskHint
from attunebench.models.base import (
    GenerateParams,
    Message,
    ModelOutput,
    NamedProvider,
    ProviderError,
)
from attunebench.models.embeddings import (
    DEFAULT_ENCODER,
    EncoderUnavailableError,
    QueryBatcher,
    TextEncoder,
    load_encoder,
)
from attunebench.models.registry import PROVIDERS, ProviderConfigError
from attunebench.registry import did_you_mean

TIE_MARGIN = 1e-6
ALIASES = {"minilm": DEFAULT_ENCODER}


def basis(candidates: Sequence[str], hint: TaskHint) -> list[tuple[float, str, str]]:
    """(weight, name, text) of the references a candidate is compared with."""
    shown = {text.strip() for text in candidates}
    reference = hint.reference
    replies = [(1.0, "chosen"), (-1.0, "rejected")]
    terms = [(weight, name, reference[name]) for weight, name in replies if reference.get(name)]
    if any(text.strip() in shown for _, _, text in terms):
        terms = []  # a candidate is one of the references: they cannot judge it
    if not terms and reference.get("wanted"):
        terms = [(1.0, "wanted", reference["wanted"])]
    if not terms and hint.text:
        terms = [(1.0, "user message", hint.text)]
    return terms


def similarity_scores(
    vectors: npt.NDArray[np.float32], terms: Sequence[tuple[float, str, str]]
) -> list[float]:
    """s(c) = sum of weight * cos(c, reference) for each candidate: `vectors` holds the
    candidates' rows, then the references'."""
    cands, refs = vectors[: len(vectors) - len(terms)], vectors[len(vectors) - len(terms) :]
    weights = np.array([weight for weight, _, _ in terms], dtype=np.float64)
    similarities = cands.astype(np.float64) @ refs.T.astype(np.float64)
    return [float(value) for value in similarities @ weights]


def rubric_score(similarity: float) -> float:
    """s in [-1, 1] (clipped) onto 1..10, to one decimal.

    >>> rubric_score(-1.0), rubric_score(0.0), rubric_score(1.0)
    (1.0, 5.5, 10.0)
    """
    clipped = min(1.0, max(-1.0, similarity))
    return round(1.0 + 4.5 * (clipped + 1.0), 1)


@PROVIDERS.register("proxy")
class ProxyJudge(NamedProvider):
    """The embedding-similarity judge; see the module docstring."""

    supported_hints: frozenset[HintKind] = frozenset({"judge_pairwise", "judge_rubric"})

    def __init__(self, name: str = "minilm", *, encoder: TextEncoder | None = None) -> None:
        super().__init__(f"proxy/{name}")
        self._encoder_name = ALIASES.get(name, name)
        self._encoder = encoder
        self._loading = threading.Lock()  # encodings run in threads: load the encoder once
        # One item's texts recur in all of its judge calls: each is encoded once, together
        # with the texts of every other call waiting at the same moment.
        self._vectors = QueryBatcher(lambda texts: self._load().encode(texts))

    def _load(self) -> TextEncoder:
        with self._loading:
            if self._encoder is None:
                self._encoder = load_encoder(self._encoder_name)
            return self._encoder

    async def check(self) -> None:
        """Load the encoder before the run: a mistyped name stops it at plan time."""
        try:
            await asyncio.to_thread(self._load)
        except EncoderUnavailableError as error:
            name = self.spec.partition("/")[2]
            near = did_you_mean(name, ALIASES)
            said = f"no local copy of sentence encoder {name!r}{near}" if near else str(error)
            raise ProviderConfigError(f"{self.spec}: {said}") from None

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        if hint is None or hint.kind not in ("judge_pairwise", "judge_rubric"):
            kind = "no hint" if hint is None else repr(hint.kind)
            raise ProviderError(f"{self.spec} only judges (got {kind})", retryable=False)
        started = time.perf_counter()
        text = await self.verdict(hint)
        return ModelOutput(text=text, latency_s=time.perf_counter() - started, finish_reason="stop")

    async def _scores(
        self, candidates: Sequence[str], terms: Sequence[tuple[float, str, str]]
    ) -> list[float]:
        if not terms:
            return [0.0 for _ in candidates]
        texts = [*candidates, *(text for _, _, text in terms)]
        vectors = await asyncio.gather(*(self._vectors.embed(text) for text in texts))
        return similarity_scores(np.stack(vectors), terms)

    async def verdict(self, hint: TaskHint) -> str:
        if hint.kind == "judge_rubric":
            reply = hint.candidates.get("A")
            if reply is None:
                raise ProviderError(f"{self.spec}: a rubric hint needs reply A", retryable=False)
            terms = basis([reply], hint)
            (value,) = await self._scores([reply], terms)
            answer: dict[str, Any] = {"score": rubric_score(value), "reason": _reason(terms, value)}
            return json.dumps(answer)
        try:
            a, b = hint.candidates["A"], hint.candidates["B"]
        except KeyError:
            raise ProviderError(f"{self.spec}: pairwise needs A and B", retryable=False) from None
        terms = basis([a, b], hint)
        score_a, score_b = await self._scores([a, b], terms)
        winner = "A" if score_a > score_b else "B"
        if abs(score_a - score_b) <= TIE_MARGIN:
            winner = "tie"
        reason = f"{_reason(terms, score_a, 'A')}; {_reason(terms, score_b, 'B')}"
        return json.dumps({"winner": winner, "reason": reason})


def _reason(terms: Sequence[tuple[float, str, str]], value: float, label: str = "reply") -> str:
    names = " ".join(f"{'+' if weight > 0 else '-'}{name}" for weight, name, _ in terms)
    return f"proxy: {label} similarity ({names or 'no reference'}) = {value:+.3f}"
