"""What a `run --ray` driver keeps of each shard, as the shard goes.

A shard's folder in RUNDIR, `shards/I-of-N/`, is an ordinary shard run directory: the files
its tasks bring back, and two the driver keeps itself as the shard's letters arrive: its
`cache.sqlite` and its `ledger.json`. Each try of the shard starts from the folder as kept then.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attunebench.engine.cache import ResponseCache
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.runner import RunConfig
from attunebench.engine.shards import Shard, sum_ledgers
from attunebench.engine.wiring import Found
from attunebench.on_ray.inbox import Letter
from attunebench.on_ray.shard import CACHE_FILE, ShardJob, ShardOutcome
from attunebench.records import Ledger, Tally
from attunebench.rundir import LEDGER_FILE, RUN_FILE, read_ledger, read_run_info, write_json

SHARDS_DIR = "shards"
LAST_WORD = 2**62  # the seq of a finished try's own ledger.json: no letter of it outranks it


def shard_dir(out: Path, shard: Shard) -> Path:
    return out / SHARDS_DIR / f"{shard.index}-of-{shard.count}"


class ShardBook:
    """What the driver keeps of one shard: its folder, its cache, and its ledger (what earlier
    commands counted, plus what each try of this command has counted so far)."""

    def __init__(self, config: RunConfig, shard: Shard) -> None:
        self.shard = shard
        self.folder = shard_dir(config.out, shard)
        self.folder.mkdir(parents=True, exist_ok=True)
        with_cache = config.cache_path is not None
        self._cache = ResponseCache(self.folder / CACHE_FILE) if with_cache else None
        self._before = read_ledger(self.folder)
        self._tries: dict[int, Ledger] = {}
        # By try: the newest ledger its letters brought (seq, JSON), not read yet; and the seq
        # of the one in `_tries`.
        self._latest: dict[int, tuple[int, dict[str, Any]]] = {}
        self._read: dict[int, int] = {}

    def job(self, config: RunConfig, attempt: int, found: Mapping[str, Found] | None) -> ShardJob:
        """The task of a try: the shard's files and cache as kept now."""
        files = {
            p.name: p.read_bytes()
            for p in self.folder.iterdir()
            if p.is_file() and not p.name.startswith((CACHE_FILE, ".")) and p.name != LEDGER_FILE
        }
        cache = self._cache.image() if self._cache is not None else None
        return ShardJob(config, self.shard, attempt, files, cache, found)

    def take(self, letter: Letter) -> None:
        if self._cache is not None:
            for key, value in letter.rows:
                self._cache.put_value(key, value)
        latest = self._latest.get(letter.attempt)
        if latest is None or letter.seq > latest[0]:  # the try's latest word, read once written
            self._latest[letter.attempt] = (letter.seq, letter.ledger)

    def write(self) -> None:
        """Every answer taken committed, and the ledger written."""
        if self._cache is not None:
            self._cache.flush()
        for attempt, (seq, latest) in self._latest.items():
            if seq > self._read.get(attempt, 0):
                self._tries[attempt] = Ledger.model_validate(latest)
                self._read[attempt] = seq
        self._latest.clear()
        ledger = sum_ledgers([self._before, *self._tries.values()])
        _replace(self.folder / LEDGER_FILE, ledger.model_dump_json(indent=2) + "\n")

    def keep(self, config: RunConfig, outcome: ShardOutcome) -> None:
        """A finished try's files in the shard's folder; its ledger as the try's last word."""
        for name, content in outcome.files.items():
            if name == LEDGER_FILE:  # the try's last word: no letter of it comes after
                self._latest.pop(outcome.attempt, None)
                self._read[outcome.attempt] = LAST_WORD
                self._tries[outcome.attempt] = Ledger.model_validate_json(content)
            else:
                (self.folder / name).write_bytes(content)
        info = read_run_info(self.folder)
        if info is not None:  # the task read the data from its scratch copy
            write_json(
                self.folder / RUN_FILE, info.model_copy(update={"dataset": str(config.data)})
            )
        self.write()

    def session(self) -> Tally:
        """What this command's tries counted."""
        return LedgerBook(sum_ledgers(self._tries.values())).totals()

    def close(self) -> None:
        self.write()
        if self._cache is not None:
            self._cache.close()


def _replace(path: Path, text: str) -> None:
    """`path` now holds `text`, whole or not at all (a rename): it must outlive a killed
    driver, not a lost machine, and is rewritten many times a second, so it is not synced."""
    part = path.with_name(f".{path.name}.part")
    part.write_text(text, encoding="utf-8")
    os.replace(part, path)
