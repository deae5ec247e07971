"""The run directory on disk (docs/architecture.md, "The run directory"; formats in
records.py). The engine writes it and the analysis reads it, so this module sits below both.

records.jsonl is fsynced on a thread: an fsync on the event loop would hold up every call in
flight. Reading drops a torn last line but refuses a bad line anywhere else, naming file and
line; run.json and ledger.json are replaced atomically.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from attunebench import __version__
from attunebench.data.jsonl import atomic_writer
from attunebench.frozen import first_problem, problem_text
from attunebench.records import ItemRecord, Ledger, RunInfo
from attunebench.records_v1 import V1, upgrade_line

RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"
LEDGER_FILE = "ledger.json"
CONVERSATIONS_FILE = "conversations.jsonl"

M = TypeVar("M", bound=BaseModel)


class RunDirError(ValueError):
    """A run directory's file cannot be read; the message names the file and the line."""


def write_json(path: Path, value: BaseModel) -> None:
    with atomic_writer(path) as handle:
        handle.write(value.model_dump_json(indent=2) + "\n")


def _read_model(path: Path, model: type[M]) -> M | None:
    if not path.exists():
        return None
    try:
        return model.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as error:
        problem = error.errors()[0]
        if tuple(problem["loc"]) == ("format",) and problem["type"] == "literal_error":
            raise RunDirError(_other_version(path, problem["input"], problem["ctx"])) from None
        raise RunDirError(
            f"{path}: not a valid {model.__name__}: {problem_text(problem)}"
        ) from None


def _other_version(path: Path, found: object, context: dict[str, Any] | None) -> str:
    """A file in a format this version does not read: made by another version of the package."""
    expected = (context or {}).get("expected", "")
    return (
        f"{path}: made by another version of attunebench (format {found!r}; this version, "
        f"{__version__}, reads {expected}): run it again with this version, or read it with "
        "the version that made it"
    )


def read_run_info(rundir: Path) -> RunInfo | None:
    return _read_model(rundir / RUN_FILE, RunInfo)


def read_ledger(rundir: Path) -> Ledger | None:
    return _read_model(rundir / LEDGER_FILE, Ledger)


def read_records(path: Path) -> list[ItemRecord]:
    """Every record in a records.jsonl; a torn last line (a killed writer) is dropped."""
    if not path.exists():
        return []
    found = path.read_bytes()
    lines = found.split(b"\n")
    if V1 in found:  # one search of the file, not one per line: most files hold no v1 line
        lines = list(map(upgrade_line, lines))
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(ItemRecord.model_validate_json(line))
        except ValidationError as error:
            if number == len(lines):  # no newline after it: the write was cut short
                break
            field, problem = first_problem(error, "line")
            raise RunDirError(f"{path}, line {number}: {field}: {problem}") from None
    return records


class RecordWriter:
    """Appends records to records.jsonl, flushing each line and fsyncing now and then."""

    def __init__(self, path: Path, fsync_every_s: float = 1.0) -> None:
        self.path = path
        self._handle: IO[str] = path.open("a", encoding="utf-8")
        self._fsync_every_s = fsync_every_s
        self._last_sync = time.monotonic()
        self._syncing: threading.Thread | None = None

    def write(self, record: ItemRecord) -> None:
        self._handle.write(record.model_dump_json() + "\n")
        self._handle.flush()  # into the OS now: survives the process being killed
        now = time.monotonic()
        syncing = self._syncing is not None and self._syncing.is_alive()
        if now - self._last_sync >= self._fsync_every_s and not syncing:
            self._last_sync = now
            # onto the disk: survives the machine going down
            self._syncing = threading.Thread(
                target=os.fsync, args=(self._handle.fileno(),), name="records-fsync", daemon=True
            )
            self._syncing.start()

    def close(self) -> None:
        if not self._handle.closed:
            if self._syncing is not None:
                self._syncing.join()
            os.fsync(self._handle.fileno())
            self._handle.close()


def rewrite_records(path: Path, records: Sequence[BaseModel]) -> None:
    """Replace a JSON Lines file (records.jsonl, when resuming) with exactly these records,
    whole or not at all."""
    with atomic_writer(path) as handle:
        for record in records:
            handle.write(record.model_dump_json() + "\n")
