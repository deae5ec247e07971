"""The batch journal (`batches.jsonl` in the run directory): which batch holds each request.

One line per event, written and synced as it happens: a batch `prepared` (OpenAI: its input
file uploaded, with the requests in it), `submitted` (its id, with its requests), `ended`
(with the requests it did not answer, which go out again). A line torn by a kill is the last
one, and is ignored: that event never happened. Lines of other models are skipped."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from pydantic import ValidationError

from attunebench.frozen import Frozen

JOURNAL_FILE: Final = "batches.jsonl"
JOURNAL_FORMAT: Final = "attunebench-batches/v1"
Event = Literal["prepared", "submitted", "ended"]


class JournalLine(Frozen):
    format: Literal["attunebench-batches/v1"] = JOURNAL_FORMAT
    event: Event
    spec: str
    batch_id: str = ""  # none yet when prepared
    keys: tuple[str, ...] = ()  # prepared, submitted: its requests; ended: those unanswered
    status: str | None = None
    prepared: str | None = None  # what the batch was made from (OpenAI: its input file)
    at: str


class Journal:
    """The batches a model's requests went out in, kept in the run directory (or in memory)."""

    def __init__(self, spec: str, path: Path | None = None) -> None:
        self.spec = spec
        self.path = path
        self.batch_of: dict[str, str] = {}  # request key -> the batch that answers it
        self.unclaimed: dict[str, tuple[str, ...]] = {}  # prepared, no batch journalled yet
        if path is not None and path.exists():
            for line in self._read(path):
                self._apply(line)

    def _read(self, path: Path) -> list[JournalLine]:
        lines = path.read_text(encoding="utf-8").splitlines()
        read = []
        for number, text in enumerate(lines, 1):
            try:
                line = JournalLine.model_validate_json(text)
            except ValidationError as error:
                if number == len(lines):  # torn by a kill mid-write: that event never happened
                    break
                raise ValueError(f"{path}, line {number}: {error}") from None
            if line.spec == self.spec:
                read.append(line)
        return read

    def _apply(self, line: JournalLine) -> None:
        if line.event == "prepared" and line.prepared is not None:
            self.unclaimed[line.prepared] = line.keys
            return
        if line.event == "submitted":
            self.batch_of.update(dict.fromkeys(line.keys, line.batch_id))
            if line.prepared is not None:
                self.unclaimed.pop(line.prepared, None)
            return
        for key in line.keys:  # unanswered: the next request goes out again
            if self.batch_of.get(key) == line.batch_id:
                del self.batch_of[key]

    def keys_of(self, batch_id: str) -> set[str]:
        return {key for key, batch in self.batch_of.items() if batch == batch_id}

    def prepared_for(self, key: str) -> str | None:
        """What a batch for this request was being made from when the run was killed."""
        return next((p for p, keys in self.unclaimed.items() if key in keys), None)

    def record(
        self,
        event: Event,
        batch_id: str,
        keys: Sequence[str],
        status: str,
        prepared: str | None = None,
    ) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        line = JournalLine(
            event=event,
            spec=self.spec,
            batch_id=batch_id,
            keys=tuple(keys),
            status=status,
            prepared=prepared,
            at=now,
        )
        self._apply(line)
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One write of one whole line, synced: a batch id must outlive a kill that follows.
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line.model_dump_json() + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
