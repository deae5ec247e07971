"""A run split across machines: `--shard i/N` runs a deterministic share of the plan, and
`merge` joins the shards' run directories into one whose records equal a single run's.

A conversation belongs to shard `1 + sha256(id) mod N`: the same on every machine, and by
conversation, so every item of a conversation (the cluster the analysis resamples) is in one
shard. Shards merge when they are one plan cut N ways, each shard once, none missing, and no
item recorded by two of them; anything else is refused with one line naming what differs.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attunebench import rundir
from attunebench.data.jsonl import iter_conversations, write_conversations
from attunebench.engine.ledger import LedgerBook
from attunebench.records import ItemRecord, Ledger, RunInfo

_SHARD = re.compile(r"(\d+)/(\d+)")
# What must be equal for shards to be one plan (servers may differ: that is the point); a run
# directory's plan adds its item count and its shard (engine.runner.PLAN_FIELDS).
SHARED_PLAN = (
    "dataset_sha256",
    "tasks",
    "task_options",
    "models",
    "judges",
    "prompts",
    "seed",
    "limit",
    "suite",
    "person",
)


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # from 1
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, conversation_id: str) -> bool:
        digest = hashlib.sha256(conversation_id.encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count + 1 == self.index


def parse_shard(text: str) -> Shard:
    """`i/N` with 1 <= i <= N.

    >>> parse_shard("2/3")
    Shard(index=2, count=3)
    """
    found = _SHARD.fullmatch(text.strip())
    if found is None or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise ValueError(f"--shard {text!r}: expected i/N with 1 <= i <= N, like 2/8")
    return Shard(int(found.group(1)), int(found.group(2)))


def plan_value(info: RunInfo, name: str) -> object:
    """A plan field as compared: servers may move (replicas, ports), models may not."""
    value = getattr(info, name)
    if name in ("models", "judges"):
        return [model.model_copy(update={"base_url": None}) for model in value]
    if name == "suite" and value is not None:
        return value.identity  # a run made before the train split was recorded resumes
    return value


def _read_shards(directories: Sequence[Path]) -> list[tuple[Path, RunInfo, Shard]]:
    shards = []
    for directory in directories:
        info = rundir.read_run_info(directory)
        if info is None:
            raise rundir.RunDirError(f"{directory}: no {rundir.RUN_FILE}; not a run directory")
        if info.shard is None:
            raise rundir.RunDirError(f"{directory}: not a shard (run without --shard)")
        shards.append((directory, info, parse_shard(info.shard)))
    first_dir, first, first_shard = shards[0]
    seen: dict[int, Path] = {}
    for directory, info, shard in shards:
        differs = [n for n in SHARED_PLAN if plan_value(info, n) != plan_value(first, n)]
        if differs or shard.count != first_shard.count:
            what = ", ".join(differs) or f"the shard count ({shard} against {first_shard})"
            raise rundir.RunDirError(
                f"{directory} is not a shard of {first_dir}'s run: {what} differ"
            )
        if shard.index in seen:
            raise rundir.RunDirError(f"{directory} and {seen[shard.index]} are both shard {shard}")
        seen[shard.index] = directory
    missing = [f"{i}/{first_shard.count}" for i in range(1, first_shard.count + 1) if i not in seen]
    if missing:
        raise rundir.RunDirError(f"shard {', '.join(missing)} missing: merge needs every shard")
    return shards


def _records(shards: Sequence[tuple[Path, RunInfo, Shard]]) -> list[ItemRecord]:
    owner: dict[tuple[str, str, str, int, str, str], Path] = {}
    merged: list[ItemRecord] = []
    for directory, _, _ in shards:
        latest = {r.key: r for r in rundir.read_records(directory / rundir.RECORDS_FILE)}
        for key, record in latest.items():
            if key in owner:
                raise rundir.RunDirError(
                    f"{directory} and {owner[key]} both recorded {key[0]} item "
                    f"{key[2]}#{key[3]} for {key[1]}: overlapping shards"
                )
            owner[key] = directory
            merged.append(record)
    return merged


def sum_ledgers(ledgers: Iterable[Ledger | None]) -> Ledger:
    """One ledger counting what each counted: entries summed by (model, task, role), and each
    model's servers added up (every shard started its own)."""
    book = LedgerBook()
    for ledger in ledgers:
        book.add(ledger)
    return book.to_ledger()


def _info(infos: Sequence[RunInfo]) -> RunInfo:
    """One run.json for the whole plan: counts summed, lists joined."""
    first = infos[0]
    left_out: dict[str, Counter[str]] = {}
    for info in infos:
        for task, counts in info.left_out.items():
            left_out.setdefault(task, Counter()).update(counts)
    skipped = {(s.task, s.model, s.reason): s for info in infos for s in info.skipped}
    adapted: dict[str, dict[str, str]] = {}
    capabilities: dict[str, dict[str, Any]] = {}
    for info in infos:
        for model, changes in info.adapted.items():
            adapted.setdefault(model, {}).update(changes)
        for model, found in info.capabilities.items():
            capabilities.setdefault(model, found)  # as the first shard found it
    finished = [info.finished_at for info in infos if info.finished_at]
    return first.model_copy(
        update={
            "dataset_ids": sorted({i for info in infos for i in info.dataset_ids}),
            "provenance": dict(
                sorted({k: v for info in infos for k, v in info.provenance.items()}.items())
            ),
            "left_out": {task: dict(counts) for task, counts in left_out.items()},
            "planned_items": sum(info.planned_items for info in infos),
            "empty_tasks": [t for t in first.empty_tasks if all(t in i.empty_tasks for i in infos)],
            "skipped": list(skipped.values()),
            "adapted": adapted,
            "capabilities": capabilities,
            "shard": None,
            "started_at": min(info.started_at for info in infos),
            "finished_at": max(finished) if len(finished) == len(infos) else None,
            "complete": all(info.complete for info in infos),
        }
    )


def merge_shards(directories: Sequence[Path], out: Path) -> RunInfo:
    """Join every shard of one run into `out`, a run directory like a single run's."""
    if out.exists() and any(out.iterdir()):
        raise rundir.RunDirError(f"{out} is not empty; merge into a new directory")
    shards = _read_shards(directories)
    records = _records(shards)
    info = _info([info for _, info, _ in shards])
    out.mkdir(parents=True, exist_ok=True)
    rundir.rewrite_records(out / rundir.RECORDS_FILE, records)
    conversations = [
        conversation
        for directory, _, _ in shards
        for conversation in iter_conversations(directory / rundir.CONVERSATIONS_FILE)
    ]
    write_conversations(out / rundir.CONVERSATIONS_FILE, conversations)
    rundir.write_json(
        out / rundir.LEDGER_FILE,
        sum_ledgers(rundir.read_ledger(directory) for directory, _, _ in shards),
    )
    rundir.write_json(out / rundir.RUN_FILE, info)
    return info
