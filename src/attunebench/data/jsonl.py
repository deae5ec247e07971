"""Streaming JSON Lines IO for conversations: read one at a time; written atomically, so a
failure never leaves a partial output file behind.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from attunebench.data.schema import FORMAT, Conversation


def iter_conversations(path: str | Path) -> Iterator[Conversation]:
    """Yield each conversation in a valid file (use `validate` first for friendly errors)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield Conversation.model_validate_json(line)


def read_conversations(path: str | Path) -> list[Conversation]:
    return list(iter_conversations(path))


def conversation_line(conversation: Conversation) -> str:
    """One JSON line: defaults and nulls left out, except `format`, which every line states."""
    rest = conversation.model_dump_json(
        exclude_defaults=True, exclude_none=True, exclude={"format"}
    )
    return f'{{"format":"{FORMAT}",{rest[1:]}'  # `id` is required, so `rest` is never "{}"


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file, read in blocks (a dataset or a model can be large)."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file beside `path`; rename it over `path` only on success."""
    target = Path(path)
    if target.is_dir():  # said before the temporary file exists, so no message names it
        raise IsADirectoryError(errno.EISDIR, "is a folder; give a file name", str(target))
    folder = next((p for p in target.parents if p.exists()), None)
    if folder is not None and not folder.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{folder} is a file, not a folder", str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as error:
        raise _naming(error, target) from None
    try:
        # mkstemp makes the file owner-only; datasets and run files are meant to be read by all.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except OSError as error:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise _naming(error, target) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _naming(error: OSError, target: Path) -> OSError:
    """A write's error named by the file asked for, not the hidden temporary file or a folder
    made on the way; an error about another file (one the writer was reading) is left as is."""
    named = None if error.filename is None else Path(error.filename)
    if (
        named is None
        or named in target.parents
        or (named.parent == target.parent and named.name.startswith(f".{target.name}."))
    ):
        error.filename = str(target)
    return error


def write_conversations(path: str | Path, conversations: Iterable[Conversation]) -> int:
    """Write conversations atomically; returns how many were written."""
    count = 0
    with atomic_writer(path) as handle:
        for conversation in conversations:
            handle.write(conversation_line(conversation) + "\n")
            count += 1
    return count


def canonical_json(value: object) -> str:
    """Canonical JSON (sorted keys, no spaces): the form hashed for cache keys and dataset ids."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
