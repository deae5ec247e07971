"""A suite's manifest: the fixed, versioned item set a suite name stands for (docs/suite.md
lists what it fixes). The suite's `digest` is the SHA-256 of the manifest file itself, so any
change to it is a different digest.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import resources
from typing import Any, Final, Literal

from pydantic import Field, ValidationError

from attunebench.frozen import Frozen, first_problem

FORMAT: Final = "attunebench-suite/v1"


class SuiteError(ValueError):
    """A suite cannot be run as its manifest says; the message says why in one line."""


class CorpusPart(Frozen):
    """One importer run over one corpus folder, and the conversations taken from it."""

    name: str = Field(description="The part's name in counts and docs, e.g. convai1-human-bot.")
    corpus: str = Field(description="The corpus folder under ATTUNEBENCH_DATA_DIR.")
    importer: str = Field(description="The importer's registry name.")
    options: dict[str, str] = Field(default_factory=dict)
    license: str
    non_commercial: bool
    gold: str = Field(description="Who gave the gold, in words.")
    files: dict[str, str] = Field(description="Each source file read (relative) -> SHA-256.")
    conversations: list[str] = Field(description="The evaluated conversation ids, in order.")
    train: list[str] = Field(default_factory=list, description="Ids of the train split.")


class Manifest(Frozen):
    format: Literal["attunebench-suite/v1"] = FORMAT
    name: str
    version: str
    description: str
    seed: int = Field(description="The run's seed (every seeded choice of the tasks).")
    selection_seed: int = Field(description="The seed the conversations were drawn with.")
    tasks: dict[str, dict[str, Any]] = Field(description="Each task with all its options.")
    parts: list[CorpusPart]
    dataset_sha256: str = Field(description="SHA-256 of the evaluated conversations' JSONL.")
    train_sha256: str = Field(description="SHA-256 of the train split's JSONL.")
    items: dict[str, list[str]] = Field(
        description="Per task, every item id: conversation|turn|item|variant."
    )


def _folder() -> Any:
    return resources.files("attunebench.suite") / "manifests"


def suite_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".json") for p in _folder().iterdir() if p.name.endswith(".json")
    )


@cache
def manifest_bytes(name: str) -> bytes:
    path = _folder() / f"{name}.json"
    if not path.is_file():
        known = ", ".join(suite_names()) or "none"
        raise SuiteError(f"unknown suite {name!r} (shipped: {known})")
    data: bytes = path.read_bytes()
    return data


def load_manifest(name: str) -> Manifest:
    try:
        return Manifest.model_validate_json(manifest_bytes(name))
    except ValidationError as error:
        where, problem = first_problem(error)
        raise SuiteError(f"suite {name!r}: manifest field {where}: {problem}") from None


def suite_digest(name: str) -> str:
    """The SHA-256 of the shipped manifest: what run.json records and the report compares."""
    return hashlib.sha256(manifest_bytes(name)).hexdigest()


def item_key(conversation_id: str, turn_index: int, item_id: str, variant: str) -> str:
    return "|".join((conversation_id, str(turn_index), item_id, variant))
