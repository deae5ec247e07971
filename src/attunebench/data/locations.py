"""Where the third-party corpora live: `ATTUNEBENCH_DATA_DIR`, else `../shared/data`.

The default is relative to the current directory (the repository root, in a checkout), so
corpora are read in place and never copied into the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_VARIABLE = "ATTUNEBENCH_DATA_DIR"
DEFAULT_DATA_DIR = Path("..") / "shared" / "data"


def data_dir() -> Path:
    return Path(os.environ.get(DATA_DIR_VARIABLE) or DEFAULT_DATA_DIR)


def corpus_dir(name: str) -> Path:
    """The folder of one corpus, e.g. `corpus_dir("esconv")`."""
    return data_dir() / name
