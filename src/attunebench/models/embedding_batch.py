"""Query embeddings for many concurrent calls, encoded together in one forward pass, and
remembered (a pair is asked in both orders, a reply recurs as a judge candidate)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Encode = Callable[[Sequence[str]], npt.NDArray[np.float32]]


class QueryBatcher:
    """`await batcher.embed(text)`: the text's row, encoded with every other waiting text."""

    def __init__(self, encode: Encode, size: int = 8192) -> None:
        self._encode = encode
        self._size = size
        self._known: OrderedDict[str, Vector] = OrderedDict()
        self._waiting: dict[str, list[asyncio.Future[Vector]]] = {}
        self._flush: asyncio.Task[None] | None = None
        self.passes = 0  # forward passes made: what batching saves is visible

    async def embed(self, text: str) -> Vector:
        known = self._known.get(text)
        if known is not None:
            self._known.move_to_end(text)
            return known
        future: asyncio.Future[Vector] = asyncio.get_running_loop().create_future()
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
            self._remember(text, row)
            for future in batch[text]:
                if not future.done():
                    future.set_result(row)

    def _remember(self, text: str, row: Vector) -> None:
        self._known[text] = row
        while len(self._known) > self._size:
            self._known.popitem(last=False)
