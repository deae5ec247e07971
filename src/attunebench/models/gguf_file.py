"""A GGUF file of the user's own, served by `local/NAME` as the four pinned models are
(`options = { file = "PATH", sha256 = "..." }`; docs/running-models.md).

The file's digest, checked against `sha256` where given, is the model's identity in the cache
(the weights, never the path). A record in the model cache keyed by the file's path keeps the
digest with its size and modification time, so a large file is hashed again only when it
changed. Whether the model has a chat template is read from the header's keys alone
(`header_keys`): gguf's own reader builds every vocabulary entry first, seconds for a large
vocabulary."""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from attunebench.models.local_models import LocalModelError, digest_of, model_dir

CHAT_TEMPLATE = "tokenizer.chat_template"
MAGIC = b"GGUF"
# The byte size of each fixed-size GGUF value type (gguf's GGUFValueType numbers); 8 is a
# string (a u64 length and its bytes) and 9 an array (a u32 type, a u64 count, the values).
FIXED_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
STRING, ARRAY = 8, 9


class _Cut(Exception):
    """The header ends before its keys do."""


def _read(handle: BinaryIO, size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise _Cut
    return data


def _u32(handle: BinaryIO) -> int:
    return int(struct.unpack("<I", _read(handle, 4))[0])


def _u64(handle: BinaryIO) -> int:
    return int(struct.unpack("<Q", _read(handle, 8))[0])


def _skip_value(handle: BinaryIO, kind: int) -> None:
    """Move past one value of type `kind` without building it."""
    if kind in FIXED_SIZES:
        _read(handle, FIXED_SIZES[kind])
    elif kind == STRING:
        handle.seek(_u64(handle), 1)
    elif kind == ARRAY:
        inner, count = _u32(handle), _u64(handle)
        if inner in FIXED_SIZES:
            handle.seek(FIXED_SIZES[inner] * count, 1)
        else:
            for _ in range(count):
                _skip_value(handle, inner)
    else:
        raise ValueError(f"value type {kind} is not a GGUF type")


def header_keys(path: Path) -> frozenset[str]:
    """The metadata keys of a GGUF file (versions 2 and 3); one line naming one that is not."""
    with path.open("rb") as handle:
        begins = handle.read(4)
        if begins != MAGIC:
            raise LocalModelError(f"{path}: not a GGUF file (it begins {begins!r}, not b'GGUF')")
        try:
            version = _u32(handle)
            if version not in (2, 3):
                raise LocalModelError(f"{path}: GGUF version {version} (llama.cpp reads 2 and 3)")
            _u64(handle)  # the tensors', which come after the keys
            keys = set()
            for _ in range(_u64(handle)):
                keys.add(_read(handle, _u64(handle)).decode("utf-8", errors="replace"))
                _skip_value(handle, _u32(handle))
        except (_Cut, ValueError, OverflowError) as error:
            detail = str(error) or "it ends inside the header"
            raise LocalModelError(f"{path}: not a whole GGUF header ({detail})") from None
    return frozenset(keys)


@dataclass(frozen=True, slots=True)
class GgufFile:
    """A user's GGUF file: name, path, pinned digest (or None), whether it has a chat template."""

    name: str
    file: Path
    pinned: str | None
    chat: bool

    def path(self) -> Path:
        """The file, once its digest matches the pin."""
        digest = self.digest()
        if self.pinned is not None and digest != self.pinned:
            raise LocalModelError(
                f"{self.file}: SHA-256 {digest} is not the {self.pinned} its models-file "
                f"entry local/{self.name} gives"
            )
        return self.file

    def digest(self) -> str:
        return digest_of(self.file, _record(self.file))

    @property
    def identity(self) -> str:
        """What its cached answers are keyed by: the weights' digest, never the path."""
        return f"sha256:{self.pinned or self.digest()}"


def _record(file: Path) -> Path:
    key = hashlib.sha256(str(file).encode()).hexdigest()[:24]
    return model_dir() / "files" / f"{key}.verified.json"


def gguf_file(name: str, file: str, pinned: str | None) -> GgufFile:
    """The entry's file, read as far as its header; one line naming what is wrong with it."""
    path = Path(file).expanduser().absolute()
    if pinned is not None:
        pinned = pinned.strip().lower()
        if len(pinned) != 64 or any(c not in "0123456789abcdef" for c in pinned):
            raise LocalModelError(f"local/{name}: sha256 {pinned!r} is not 64 hexadecimal digits")
    if path.is_dir():
        raise LocalModelError(f"{path}: a folder; file names the model's .gguf file")
    if not path.is_file():
        raise LocalModelError(f"{path}: no such file (the file of local/{name})")
    return GgufFile(name, path, pinned, CHAT_TEMPLATE in header_keys(path))
