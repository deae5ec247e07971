"""`baseline/knn`: the k train examples most like the item, their golds combined.

Fitted on a train split (`train=FILE`), with all-MiniLM-L6-v2 unless `encoder=` names another;
k defaults to 5. Item and example are compared by the mean cosine similarity of the texts the
item's form says a baseline reads (`AnswerForm.reads`). Among the examples asking the item's
question, the k most similar give their golds, which `combine` makes one, each weighted by its
similarity (a negative one counts as nothing). Embedding the train texts is its one slow step
(a minute or more on a laptop's CPU), done in `prepare` and kept in the run's cache folder."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import Field

from attunebench.answerform import HintKind, TaskHint
from attunebench.frozen import Frozen
from attunebench.models.base import Example, GenerateParams, Preparation, ProviderError
from attunebench.models.baselines import base
from attunebench.models.embeddings import (
    EncoderUnavailableError,
    EncodingStopped,
    QueryBatcher,
    TextEncoder,
    encode_stored,
    load_encoder,
)
from attunebench.models.registry import ProviderConfigError

Matrix = npt.NDArray[np.float32]
EMBEDDINGS_FOLDER = "embeddings"  # in the run's cache folder


class KnnOptions(Frozen):
    train: Path
    k: int = Field(default=5, ge=1)
    encoder: str | None = None


class KnnBaseline(base.Fitted):
    def __init__(self, spec: str, options: KnnOptions, encoder: TextEncoder | None = None) -> None:
        super().__init__(spec, options.train)
        self.options = options
        self._encoder: TextEncoder | None = encoder  # loaded on first use unless given
        self._queries = QueryBatcher(lambda texts: self._fitted_encoder().encode(texts))
        # Per kind: every example's texts embedded, (examples, texts per example, dimension).
        self._indexes: dict[HintKind, Matrix] = {}
        self._fit_lock = threading.Lock()
        self._store: Path | None = None  # where encoded train splits are kept (prepare says)
        self._stop = threading.Event()  # set on an interrupt or close: encoding stops

    def learn(self, examples: Sequence[Example]) -> None:
        super().learn(examples)
        self._indexes = {}

    async def answer(self, hint: TaskHint, params: GenerateParams) -> str:
        # Each query text is embedded with the other calls' texts waiting at the same moment
        # (`QueryBatcher`); the neighbour search is then a matrix product.
        assert hint.form is not None
        alike = self.alike(hint)
        reads = hint.form.reads(hint)
        vectors = await asyncio.gather(*(self._queries.embed(text) for text in reads))
        similarity = self._similarities(hint.kind, np.stack(vectors))[alike]
        order = np.argsort(-similarity, kind="stable")[: self.options.k]
        weights = np.clip(similarity[order], 1e-6, None)  # cosine can be negative; weights cannot
        return self.written(hint, [alike[i] for i in order.tolist()], weights.tolist())

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
        kinds = sorted(k for k in preparation.kinds if self.examples.get(k))
        try:
            if self._encoder is None:
                preparation.report("loading its sentence encoder")
                await asyncio.to_thread(self._fitted_encoder)
            for kind in kinds:
                total = len(self._texts(kind))
                preparation.report(f"encoding its train split ({total} {kind} texts)")

                def done(rows: int, total: int = total, kind: str = kind) -> None:
                    preparation.report(f"encoding its train split ({rows}/{total} {kind} texts)")

                await asyncio.to_thread(self._index, kind, done)
        except asyncio.CancelledError:
            self._stop.set()  # the thread sees it between chunks; nothing half-stored
            raise

    async def aclose(self) -> None:
        self._stop.set()

    def _texts(self, kind: HintKind) -> list[str]:
        """What the examples of `kind` are compared by, example after example."""
        return [
            text for e in self.examples[kind] if e.hint.form for text in e.hint.form.reads(e.hint)
        ]

    def _index(self, kind: HintKind, progress: Callable[[int], None] | None = None) -> Matrix:
        """The train texts of `kind` embedded (examples, texts, dimension), once."""
        encoder = self._fitted_encoder()
        with self._fit_lock:
            if kind not in self._indexes:
                texts = self._texts(kind)
                rows = encode_stored(
                    encoder, texts, self._store, stop=self._stop, progress=progress
                )
                examples = len(self.examples[kind])
                self._indexes[kind] = rows.reshape(examples, len(texts) // examples, -1)
            return self._indexes[kind]

    def _similarities(self, kind: HintKind, query: Matrix) -> Matrix:
        """Mean cosine similarity of the `query` rows (texts, dimension) to each `kind` example."""
        try:
            index = self._index(kind)
        except EncodingStopped:
            raise ProviderError(f"{self.spec} was closed", retryable=False) from None
        # einsum, not `index @ query`: a matrix-vector product through BLAS starts its threads
        # every call, 15.7 ms against 0.4 ms for 4,000 x 384 on a busy 2-core machine.
        similarities: Matrix = np.einsum("ntd,td->n", index, query) / query.shape[0]
        return similarities

    def _fitted_encoder(self) -> TextEncoder:
        with self._fit_lock:
            if self._encoder is None:
                self._encoder = load_encoder(self.options.encoder)
            return self._encoder
