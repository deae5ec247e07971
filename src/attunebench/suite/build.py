"""Build a suite's data from the corpora in place, checking each step against its manifest
(corpus folders, source digests, conversations, the written data's digest, the items): any
difference is a `SuiteError` saying which, so two runs of one suite digest score the same items.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from attunebench.data.importers import importers
from attunebench.data.jsonl import sha256_file, write_conversations
from attunebench.data.locations import DATA_DIR_VARIABLE, corpus_dir, fetch_command
from attunebench.data.schema import Conversation
from attunebench.suite.manifest import (
    CorpusPart,
    Manifest,
    SuiteError,
    item_key,
    load_manifest,
    suite_digest,
)
from attunebench.tasks import make_tasks


@dataclass(frozen=True)
class SuiteData:
    manifest: Manifest
    digest: str
    evaluated: list[Conversation]
    train: list[Conversation]


def corpus_folders(manifest: Manifest, root: Path | None) -> dict[str, Path]:
    """Each corpus the suite reads -> its folder: under `root`, else on the search path."""
    needed = dict.fromkeys(part.corpus for part in manifest.parts)
    return {c: root / c if root is not None else corpus_dir(c) for c in needed}


def missing_corpora(manifest: Manifest, root: Path | None) -> str | None:
    """One line naming each corpus folder the suite needs that is not there, or None."""
    folders = corpus_folders(manifest, root)
    missing = [corpus for corpus, folder in folders.items() if not folder.is_dir()]
    if not missing:
        return None
    where = "; ".join(f"{corpus} expected at {folders[corpus]}" for corpus in missing)
    return (
        f"suite {manifest.name} needs corpora that are missing: {where} "
        f"(fetch them with: {fetch_command(missing)}; or set {DATA_DIR_VARIABLE} to the folder "
        "holding them)"
    )


def _check_files(part: CorpusPart, folder: Path) -> None:
    for name, expected in part.files.items():
        path = folder / name
        if not path.is_file():
            raise SuiteError(
                f"{part.name}: {path} not found (the suite reads it; fetch it with: "
                f"{fetch_command([part.corpus])})"
            )
        found = sha256_file(path)
        if found != expected:
            raise SuiteError(
                f"{part.name}: {path} has SHA-256 {found[:12]}..., the suite's data "
                f"{expected[:12]}...: another copy or version of the corpus"
            )


def _take(
    part: CorpusPart, pool: dict[str, Conversation], ids: Sequence[str]
) -> list[Conversation]:
    absent = [i for i in ids if i not in pool]
    if absent:
        raise SuiteError(
            f"{part.name}: the importer no longer makes {len(absent)} of the suite's "
            f"conversations (first: {absent[0]})"
        )
    return [pool[i] for i in ids]


def load_suite(name: str, root: Path | None = None) -> SuiteData:
    """The suite's evaluated conversations and train split, read from the corpora."""
    manifest = load_manifest(name)
    missing = missing_corpora(manifest, root)
    if missing is not None:
        raise SuiteError(missing)
    folders = corpus_folders(manifest, root)
    evaluated: list[Conversation] = []
    train: list[Conversation] = []
    for part in manifest.parts:
        folder = folders[part.corpus]
        _check_files(part, folder)
        importer = importers.get(part.importer)(**part.options)
        pool = {c.id: c for c in importer.read(folder, Counter())}
        evaluated += _take(part, pool, part.conversations)
        train += _take(part, pool, part.train)
    return SuiteData(manifest, suite_digest(name), evaluated, train)


def item_keys(manifest: Manifest, conversations: Sequence[Conversation]) -> dict[str, list[str]]:
    """Each task's item ids on these conversations, with the manifest's options and seed."""
    tasks = make_tasks(list(manifest.tasks), manifest.tasks, manifest.seed)
    return {
        task.name: [
            item_key(i.conversation.id, i.turn_index, i.item_id, i.variant)
            for i in task.items(conversations)
        ]
        for task in tasks
    }


def check_items(suite: SuiteData) -> None:
    built = item_keys(suite.manifest, suite.evaluated)
    for task, expected in suite.manifest.items.items():
        found = built.get(task, [])
        if sorted(found) != sorted(expected):
            extra = len(set(found) - set(expected))
            lost = len(set(expected) - set(found))
            raise SuiteError(
                f"suite {suite.manifest.name}: task {task} builds {len(found)} items where the "
                f"manifest names {len(expected)} ({lost} missing, {extra} not named): the "
                "task code changed since this suite version"
            )


def write_suite_data(suite: SuiteData, folder: Path) -> tuple[Path, Path]:
    """Write `<name>.jsonl` and `<name>-train.jsonl`, checking both digests and the items."""
    folder.mkdir(parents=True, exist_ok=True)
    name = suite.manifest.name
    evaluated, train = folder / f"{name}.jsonl", folder / f"{name}-train.jsonl"
    write_conversations(evaluated, suite.evaluated)
    write_conversations(train, suite.train)
    for path, expected in (
        (evaluated, suite.manifest.dataset_sha256),
        (train, suite.manifest.train_sha256),
    ):
        if sha256_file(path) != expected:
            raise SuiteError(
                f"suite {name}: {path.name} as the importers write it now differs from the "
                "manifest's (SHA-256): an importer changed since this suite version"
            )
    check_items(suite)
    return evaluated, train
