"""The train split the references are fitted on: `report --train FILE`, or a suite run's own.

A suite run records its train split's path and SHA-256 in run.json; a notice says when it is
gone or changed (the references are then cross-fitted). A split that shares conversations with
the evaluated data is refused: the references would see the answers they guess.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from attunebench.analysis.loading import Runs
from attunebench.analysis.schema import Notice
from attunebench.data.jsonl import sha256_file
from attunebench.data.schema import Conversation
from attunebench.data.validate import load_validated


def suite_train(runs: Runs) -> tuple[Path | None, list[Notice]]:
    """The train split a suite run recorded, where it is still there unchanged."""
    recorded = [(run.path, run.info.suite) for run in runs.runs if run.info.suite is not None]
    if len(recorded) < len(runs.runs):
        return None, []
    named = [(folder / s.train, s.train_sha256) for folder, s in recorded if s.train is not None]
    for path, digest in named:
        if path.is_file() and sha256_file(path) == digest:
            return path, []
    if not named:
        return None, []
    message = (
        f"the suite's train split ({', '.join(str(path) for path, _ in named)}) is missing or "
        "changed: the references are cross-fitted by conversation (give it with --train FILE)"
    )
    return None, [Notice(kind="train_split_missing", message=message)]


def train_split(
    runs: Runs, path: Path | None, evaluated: Collection[str]
) -> tuple[list[Conversation] | None, list[Notice]]:
    """The conversations the references are fitted on (None: cross-fitted), and notices;
    `evaluated` are the ids of the conversations scored, which the split must not hold."""
    notices: list[Notice] = []
    if path is None:
        path, notices = suite_train(runs)
    if path is None:
        return None, notices
    conversations = load_validated(path)
    shared = sorted({c.id for c in conversations} & set(evaluated))
    if shared:
        raise ValueError(
            f"train split {path} shares {len(shared)} conversations with the evaluated data "
            f"(e.g. {shared[0]!r}): the references would see the answers they guess"
        )
    return conversations, notices
