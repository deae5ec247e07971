"""Where the third-party corpora live, searched per corpus in this order: `ATTUNEBENCH_DATA_DIR`,
the user's data folder (where `data fetch` writes), then `../shared/data`, beside a checkout,
so corpora are read in place and never copied into the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_VARIABLE = "ATTUNEBENCH_DATA_DIR"
DEFAULT_DATA_DIR = Path("..") / "shared" / "data"


def user_data_dir() -> Path:
    """The user's corpora folder, where `data fetch` writes unless told otherwise."""
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "attunebench" / "corpora"


def search_path() -> list[Path]:
    """The folders searched for a corpus, first match wins."""
    explicit = os.environ.get(DATA_DIR_VARIABLE)
    return [*([Path(explicit)] if explicit else []), user_data_dir(), DEFAULT_DATA_DIR]


def data_dir() -> Path:
    """The first folder of the search path that exists, else the user's data folder."""
    return next((p for p in search_path() if p.is_dir()), user_data_dir())


def corpus_dir(name: str) -> Path:
    """One corpus's folder: the first on the search path holding it, else where fetch puts it."""
    found = [p / name for p in search_path() if (p / name).is_dir()]
    return found[0] if found else user_data_dir() / name


def fetch_command(corpora: list[str]) -> str:
    """The command that fetches these corpora into the user's data folder."""
    from attunebench.data.sources import needs_acceptance

    names = " ".join(corpora)
    accept = [c for c in corpora if needs_acceptance(c)]
    flags = f" --accept-license {' '.join(accept)}" if accept else ""
    return f"attunebench data fetch {names}{flags}"


def missing_corpus(name: str) -> str:
    """One line for a corpus found nowhere: where it was looked for and how to fetch it."""
    where = ", ".join(str(p / name) for p in search_path())
    return f"corpus {name} not found (looked in {where}); fetch it with: {fetch_command([name])}"
