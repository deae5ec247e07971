"""The sources table shipped in the package (`sources.json`): each corpus's licence, citation and
files pinned upstream by commit, size and SHA-256, written by `scripts/sources_table.py` and
read by `attunebench data fetch`.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field

from attunebench.frozen import Frozen


class SourceFile(Frozen):
    file: str = Field(description="Where it goes in the corpus folder (relative).")
    url: str = Field(description="The upstream file, pinned to a commit.")
    repo: str
    commit: str
    path: str = Field(description="The upstream path inside the repository.")
    size: int
    sha256: str


class CorpusSource(Frozen):
    license: str
    non_commercial: bool = Field(description="Non-commercial or research-only licence.")
    citation: str
    files: list[SourceFile]


class SourcesTable(Frozen):
    format: Literal["attunebench-sources/v1"]
    corpora: dict[str, CorpusSource]


class UnknownCorpusError(ValueError):
    """A corpus or suite name the table does not know; the message lists the known ones."""


@cache
def sources() -> SourcesTable:
    text = (resources.files("attunebench.data") / "sources.json").read_text(encoding="utf-8")
    return SourcesTable.model_validate_json(text)


def corpus_source(name: str) -> CorpusSource:
    table = sources().corpora
    if name not in table:
        raise UnknownCorpusError(f"unknown corpus {name!r} (known: {', '.join(sorted(table))})")
    return table[name]


def needs_acceptance(name: str) -> bool:
    """Whether `data fetch` fetches this corpus only with `--accept-license NAME`."""
    table = sources().corpora
    return name in table and table[name].non_commercial


def mirrored(url: str, mirror: str | None) -> str:
    """Where to fetch `url` from: itself, or `MIRROR/HOST/PATH` for `https://HOST/PATH`."""
    if mirror is None:
        return url
    parts = urlsplit(url)
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}"
