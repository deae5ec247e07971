"""`baseline/knn`: the k nearest train examples by sentence-embedding cosine similarity vote.

Fitted on a train split (`train=FILE`, disjoint from the evaluated data), with all-MiniLM-L6-v2
unless `encoder=` names another (see `models/embeddings.py`); k defaults to 5.

- emotion: neighbours are train user messages whose label belongs to the item's label set;
  the most frequent primary wins (ties: the larger summed similarity); intensity, valence and
  arousal are the neighbours' means, where they have them.
- behavior: neighbours are train replies; every label at least half the neighbours carry is
  listed, or if none is, the most frequent one.
- preference: each candidate's neighbours among the train replies that were chosen or passed
  over; the candidate whose neighbours were chosen more often (similarity-weighted) wins.
  As a pairwise judge it picks the same way.
- response: the reply wanted for the nearest train user message, retrieved as is.
- rating: the mean feedback of the k train replies most like the last reply rated, among
  those rated on the item's scale (a thumb's neighbours are thumbs, never 1-5 ratings).
- outcome: each field's mean over the k train conversations whose user messages are most
  alike, among those that reported it on the item's scale. A scale the train split never
  showed is answered with its midpoint (`base.fit_on_scale` says why).
- rubric judging: not answered (not in `supported_hints`: a plan leaves it out).

Its one slow step is embedding the train texts of each kind it is asked (about 900 ESConv
openings: a minute or more on a laptop's CPU). The engine has it done in `prepare`, before the
first call, so the progress bar says so; the matrices are kept in the run's cache folder, named
by the SHA-256 of (encoder, texts), and a later run on the same train split loads them. An
interrupt stops the encoding within one chunk.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import Field

from attunebench.frozen import Frozen
from attunebench.models.base import GenerateParams, Preparation, ProviderError
from attunebench.models.baselines import base
from attunebench.models.baselines.train import TrainSet, load_train_set
from attunebench.models.embedding_batch import QueryBatcher
from attunebench.models.embeddings import (
    EncoderUnavailableError,
    EncodingStopped,
    TextEncoder,
    encode_stored,
    load_encoder,
)
from attunebench.models.hints import HintKind, TaskHint
from attunebench.models.registry import ProviderConfigError

Matrix = npt.NDArray[np.float32]
# A hint kind answered from another kind's train texts (a pairwise judge picks as preference
# does); every other kind it answers has texts of its own (`KnnBaseline._texts`).
INDEX_OF: dict[HintKind, str] = {"judge_pairwise": "preference"}
EMBEDDINGS_FOLDER = "embeddings"  # in the run's cache folder


class KnnOptions(Frozen):
    train: Path
    k: int = Field(default=5, ge=1)
    encoder: str | None = None


class KnnBaseline(base.Fitted):
    supported_hints = base.LABEL_AND_PAIR_KINDS | {"response", "rating", "outcome"}

    def __init__(self, spec: str, options: KnnOptions, encoder: TextEncoder | None = None) -> None:
        super().__init__(spec)
        self.options = options
        self.train: TrainSet = load_train_set(options.train)
        self._encoder: TextEncoder | None = encoder  # loaded on first use unless given
        self._queries: QueryBatcher | None = None
        self._label_sets: dict[tuple[str, tuple[str, ...]], list[list[str]]] = {}
        self._indexes: dict[str, Matrix] = {}
        self._fit_lock = threading.Lock()
        self._store: Path | None = None  # where encoded train splits are kept (prepare says)
        self._stop = threading.Event()  # set on an interrupt or close: encoding stops
        train, preference = self.train, self.train.preference
        # What each kind's neighbours are: user messages, replies, or user messages to reply to.
        self._texts: dict[str, list[str]] = {
            "emotion": [e.text for e in train.emotion],
            "behavior": [e.text for e in train.behavior],
            "preference": [t for e in preference for t in (e.chosen, *e.rejected)],
            "response": [e.user for e in train.reply],
            "rating": [e.text for e in train.rating],
            "outcome": [e.text for e in train.outcome],
        }
        self._pref_chosen = np.array(
            [float(i == 0) for e in preference for i in range(1 + len(e.rejected))], np.float32
        )

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        # Each query text is embedded with the other calls' texts waiting at the same moment
        # (`QueryBatcher`); the neighbour search is then a matrix product.
        if hint.kind == "emotion":
            labels = base.require_labels(hint, self.spec)
            return self._emotion(await self._embed(hint.text), labels)
        if hint.kind == "behavior":
            labels = base.require_labels(hint, self.spec)
            return self._behavior(await self._embed(hint.text), labels)
        if hint.kind in base.PAIR_KINDS:
            a, b = base.candidate_pair(hint, self.spec)
            vectors = await asyncio.gather(self._embed(a), self._embed(b))
            choice = self._preference(vectors)
            return base.pick_answer(hint, choice, "baseline/knn: the reply more like chosen ones")
        if hint.kind == "response":
            return self._response(await self._embed(hint.text))
        if hint.kind == "rating":
            return self._rating(await self._embed(hint.text), base.rating_scale(hint))
        if hint.kind == "outcome":
            said = "\n".join(text for role, text in hint.history if role == "user")
            return self._outcome(await self._embed(said), base.outcome_scales(hint))
        raise self.unsupported(hint)

    async def _embed(self, text: str) -> Matrix:
        if self._queries is None:
            self._queries = QueryBatcher(lambda texts: self._fitted_encoder().encode(texts))
        return await self._queries.embed(text)

    async def check(self) -> None:
        """Load the encoder now, so a missing one fails before a run starts rather than in it."""
        try:
            await asyncio.to_thread(self._fitted_encoder)
        except EncoderUnavailableError as error:
            raise ProviderConfigError(f"{self.spec}: {error}") from None

    async def prepare(self, preparation: Preparation) -> None:
        """Embed the train texts of every kind the run will ask, or load them from the cache
        folder, saying so; an interrupt (cancel) stops the encoding within one chunk."""
        self._stop.clear()  # a provider closed after one run may serve another
        if preparation.cache_dir is not None:
            self._store = preparation.cache_dir / EMBEDDINGS_FOLDER
        kinds = sorted({INDEX_OF.get(k, k) for k in preparation.kinds if self.answers(k)})
        try:
            if self._encoder is None:
                preparation.report("loading its sentence encoder")
                await asyncio.to_thread(self._fitted_encoder)
            for kind in kinds:
                total = len(self._texts[kind])
                preparation.report(f"encoding its train split ({total} {kind} texts)")

                def done(rows: int, total: int = total, kind: str = kind) -> None:
                    preparation.report(f"encoding its train split ({rows}/{total} {kind} texts)")

                await asyncio.to_thread(self._index, kind, done)
        except asyncio.CancelledError:
            self._stop.set()  # the thread sees it between chunks; nothing half-stored
            raise

    async def aclose(self) -> None:
        self._stop.set()

    def _mapped(self, kind: str, labels: tuple[str, ...]) -> list[list[str]]:
        """Each train example's labels in the item's label set, worked out once per label set:
        items share a taxonomy, and mapping every example for every item took most of a run."""
        key = (kind, labels)
        found = self._label_sets.get(key)
        if found is None:
            if kind == "emotion":
                primaries = (e.primary for e in self.train.emotion)
                found = [[m] if (m := base.map_label(p, labels)) else [] for p in primaries]
            else:
                found = [
                    [m for b in e.behaviors if (m := base.map_label(b, labels))]
                    for e in self.train.behavior
                ]
            self._label_sets[key] = found
        return found

    def _labels_near(
        self, kind: str, query: Matrix, labels: tuple[str, ...]
    ) -> tuple[list[int], dict[str, tuple[int, float]]]:
        """The k nearest train examples with a label in the item's set, and each label's
        votes among them (count, summed similarity)."""
        mapped = self._mapped(kind, labels)
        sims = self._similarities(kind, query)
        near = _nearest(sims, [bool(m) for m in mapped], self.options.k)
        if not near:
            raise self._no_gold(f"{kind} labels from this item's label set")
        return near, _votes([mapped[i] for i in near], [float(sims[i]) for i in near])

    def _emotion(self, query: Matrix, labels: tuple[str, ...]) -> str:
        examples = self.train.emotion
        near, votes = self._labels_near("emotion", query, labels)
        primary = max(labels, key=lambda label: votes.get(label, (0, 0.0)))

        def mean(values: list[float | None]) -> float | None:
            present = [v for v in values if v is not None]
            return float(np.mean(present)) if present else None

        return base.emotion_answer(
            primary,
            intensity=mean([examples[i].intensity for i in near]),
            valence=mean([examples[i].valence for i in near]),
            arousal=mean([examples[i].arousal for i in near]),
        )

    def _behavior(self, query: Matrix, labels: tuple[str, ...]) -> str:
        near, votes = self._labels_near("behavior", query, labels)
        common = [label for label in labels if 2 * votes.get(label, (0, 0.0))[0] >= len(near)]
        return base.behavior_answer(common or [max(labels, key=lambda lb: votes.get(lb, (0, 0.0)))])

    def _preference(self, pair: Sequence[Matrix]) -> str:
        """`A`, `B` or `tie`, from the two candidates' embeddings."""
        if not self._texts["preference"]:
            raise self._no_gold("preferences between replies")
        scores = []
        for candidate in pair:
            sims = self._similarities("preference", candidate)
            near = _nearest(sims, [True] * len(sims), self.options.k)
            weights = np.clip(sims[near], 1e-6, None)  # cosine can be negative; weights cannot
            scores.append(float(np.average(self._pref_chosen[near], weights=weights)))
        a, b = scores
        return "tie" if a == b else "A" if a > b else "B"

    def _response(self, query: Matrix) -> str:
        examples = self.train.reply
        if not examples:
            raise self._no_gold("replies that a participant chose or continued with")
        sims = self._similarities("response", query)
        return examples[int(np.argmax(sims))].reply

    def _rating(self, query: Matrix, scale: tuple[float, float]) -> str:
        """The mean of the nearest ratings given on the item's own scale (a neighbour's 4 of
        1-5 is no answer to a 0-1 thumb)."""
        examples = self.train.rating
        sims = self._similarities("rating", query)
        near = _nearest(sims, [e.scale == scale for e in examples], self.options.k)
        ratings = [examples[i].rating for i in near]
        return base.rating_answer(base.fit_on_scale(ratings, scale, statistics.fmean))

    def _outcome(self, query: Matrix, scales: dict[str, tuple[float, float]]) -> str:
        examples = self.train.outcome
        sims = self._similarities("outcome", query)
        found = {}
        for name, scale in scales.items():
            usable = [name in e.values and e.scales.get(name, scale) == scale for e in examples]
            near = _nearest(sims, usable, self.options.k)
            values = [examples[i].values[name] for i in near]
            found[name] = base.fit_on_scale(values, scale, statistics.fmean)
        return base.outcome_answer(found)

    def _index(self, kind: str, progress: Callable[[int], None] | None = None) -> Matrix:
        """The embeddings of the train texts of `kind`: encoded (or loaded) once."""
        encoder = self._fitted_encoder()
        with self._fit_lock:
            if kind not in self._indexes:
                self._indexes[kind] = encode_stored(
                    encoder, self._texts[kind], self._store, stop=self._stop, progress=progress
                )
            return self._indexes[kind]

    def _similarities(self, kind: str, query: Matrix) -> Matrix:
        """Cosine similarity of the `query` embedding to each train text of `kind`."""
        try:
            index = self._index(kind)
        except EncodingStopped:
            raise ProviderError(f"{self.spec} was closed", retryable=False) from None
        if index.shape[0] == 0:
            return np.zeros(0, np.float32)
        # einsum, not `index @ query`: a matrix-vector product through BLAS starts its threads
        # every call, 15.7 ms against 0.4 ms for 4,000 x 384 on a busy 2-core machine.
        similarities: Matrix = np.einsum("ij,j->i", index, query)
        return similarities

    def _fitted_encoder(self) -> TextEncoder:
        with self._fit_lock:
            if self._encoder is None:
                self._encoder = load_encoder(self.options.encoder)
            return self._encoder

    def _no_gold(self, what: str) -> ProviderError:
        return ProviderError(
            f"{self.spec}: train split {self.train.path} has no {what}", retryable=False
        )


def _nearest(sims: Matrix, eligible: Sequence[bool], k: int) -> list[int]:
    """Indices of the k most similar eligible examples, most similar first (stable on ties)."""
    ranked = np.argsort(-sims, kind="stable")
    return [int(i) for i in ranked if eligible[int(i)]][:k]


def _votes(
    label_lists: Sequence[Sequence[str]], sims: Sequence[float]
) -> dict[str, tuple[int, float]]:
    """Per label: (how many neighbours carry it, their summed similarity), to rank by both."""
    counts: Counter[str] = Counter()
    weight: defaultdict[str, float] = defaultdict(float)
    for labels, sim in zip(label_lists, sims, strict=True):
        for label in set(labels):
            counts[label] += 1
            weight[label] += sim
    return {label: (counts[label], weight[label]) for label in counts}
