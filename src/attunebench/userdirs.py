"""Where AttuneBench keeps what it makes once per machine: a folder of the user's cache folder
($XDG_CACHE_HOME, else ~/.cache), unless an environment variable names another place.
"""

from __future__ import annotations

import os
from pathlib import Path


def user_cache(name: str, override: str) -> Path:
    """`name` under the user's cache folder's attunebench/, or what the variable `override` says."""
    explicit = os.environ.get(override)
    if explicit:
        return Path(explicit)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "attunebench" / name
