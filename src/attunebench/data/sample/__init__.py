"""The sample dataset shipped with the package: twelve illustrative conversations written to
exercise every task's gold offline; not real participants' data, never to compare models.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SAMPLE_FILE = "sample.jsonl"


def sample_path() -> Path:
    """Path of the shipped sample JSON Lines file."""
    return Path(str(resources.files("attunebench.data.sample") / SAMPLE_FILE))
