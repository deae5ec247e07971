"""A stand-in sentence encoder for knn tests: fast, offline, and counting what it encodes."""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

DIMENSION = 512
WORD = re.compile(r"[a-z']+")


class HashEncoder:
    """A bag of words hashed into 512 buckets, L2-normalised: texts sharing words are near.

    Counts the texts and calls it encodes; `delay_s` makes each call slow (an encoder busy on
    a large train split), and `started` is set once the first call begins.
    """

    name = "tests/hashed-bag-of-words"

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.encoded = 0
        self.calls = 0
        self.started = threading.Event()

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.started.set()
        self.calls += 1
        self.encoded += len(texts)
        if self.delay_s:
            time.sleep(self.delay_s)
        matrix = np.zeros((len(texts), DIMENSION), np.float32)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                bucket = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big")
                matrix[row, bucket % DIMENSION] += 1.0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1.0, norms)
