"""The content-addressed response cache: SQLite in WAL mode, JSON values, never pickle.

A key is the SHA-256 of the canonical JSON of everything that decides a model's output: its
cache identity (spec, what the server runs, output-changing options), the messages, the
sampling parameters, the prompt template's id and version, the item and its hint. Nothing that
only changes how a call travels (base URLs, timeouts, concurrency) enters it, so moving a model
to another replica keeps its cache. Generation and judging share one cache: a judge is a model.

Only successful outputs are stored, by a writer thread that commits what is queued at once
(WAL, synchronous=NORMAL: a killed process keeps every committed row), so a resumed run never
repeats a call that came back. The thread is there because a commit now and then checkpoints
the WAL into the database, with fsyncs that can take tens of milliseconds: on the event loop,
that would stall every call in flight. `get` finds a value still queued.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attunebench.data.jsonl import canonical_json
from attunebench.models.base import GenerateParams, Message, ModelOutput
from attunebench.models.hints import TaskHint
from attunebench.records import PromptInfo

KEY_VERSION = 1  # bump when the key's recipe changes, so old rows are never misread

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""
_INSERT = "INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)"


def cache_key(
    *,
    identity: dict[str, Any],
    messages: list[Message],
    params: GenerateParams,
    prompt: PromptInfo,
    item_key: str,
    hint: TaskHint | None,
) -> str:
    content = {
        "v": KEY_VERSION,
        "model": identity,
        "messages": [message.to_dict() for message in messages],
        "params": params.model_dump(mode="json"),
        "prompt": [prompt.id, prompt.version],
        "item": item_key,
        "hint": None if hint is None else _hint_fields(hint),
    }
    return hashlib.sha256(canonical_json(content).encode()).hexdigest()


def _hint_fields(hint: TaskHint) -> dict[str, object]:
    # Shallow: the fields are strings, tuples and flat dicts, which JSON takes as they are;
    # dataclasses.asdict would deep-copy them, at half the cost of the whole key.
    return {f.name: getattr(hint, f.name) for f in dataclasses.fields(hint)}


@dataclass(frozen=True, slots=True)
class CachedOutput:
    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float
    finish_reason: str | None


class CacheWriteError(RuntimeError):
    """The writer thread could not store values; raised by the next put, flush or close."""


Row = tuple[str, str, float]  # key, JSON value, created


class ResponseCache:
    """One SQLite file, safe to share between runs and processes; called from one thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = _connect(self.path)  # reads only: the writer thread has its own
        self._db.execute(_SCHEMA)
        self._pending: dict[str, str] = {}  # put, maybe not committed yet
        self._queue: queue.Queue[Row | None] = queue.Queue()
        self._error: sqlite3.Error | None = None
        self._writer = threading.Thread(target=self._write_loop, name="cache-writer", daemon=True)
        self._writer.start()

    def get(self, key: str) -> CachedOutput | None:
        text = self._pending.get(key)
        if text is None:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            text = row[0]
        value = json.loads(text)
        return CachedOutput(
            text=value["text"],
            input_tokens=value["input_tokens"],
            output_tokens=value["output_tokens"],
            latency_s=value["latency_s"],
            cost_usd=value["cost_usd"],
            finish_reason=value.get("finish_reason"),
        )

    def put(self, key: str, output: ModelOutput, cost_usd: float) -> None:
        self._raise_if_failed()
        value = {
            "text": output.text,
            "input_tokens": output.input_tokens,
            "output_tokens": output.output_tokens,
            "latency_s": output.latency_s,
            "cost_usd": cost_usd,
            "finish_reason": output.finish_reason,
        }
        text = json.dumps(value, ensure_ascii=False)
        self._pending[key] = text
        self._queue.put((key, text, time.time()))

    def flush(self) -> None:
        """Wait until every value put so far is committed."""
        self._queue.join()
        self._raise_if_failed()

    def __len__(self) -> int:
        self.flush()
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        if self._writer.is_alive():
            self._queue.put(None)
            self._writer.join()
        self._db.close()
        self._raise_if_failed()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise CacheWriteError(f"cannot write to the cache {self.path}: {self._error}")

    def _write_loop(self) -> None:
        db = _connect(self.path)
        try:
            closing = False
            while not closing:
                rows, closing = self._take()
                if rows:
                    self._commit(db, rows)
                for _ in range(len(rows) + closing):
                    self._queue.task_done()
        finally:
            db.close()

    def _take(self) -> tuple[list[Row], bool]:
        """Everything queued (waiting for at least one entry), and whether close was asked."""
        entries = [self._queue.get()]
        while True:
            try:
                entries.append(self._queue.get_nowait())
            except queue.Empty:
                break
        rows = [entry for entry in entries if entry is not None]
        return rows, len(rows) < len(entries)

    def _commit(self, db: sqlite3.Connection, rows: list[Row]) -> None:
        try:
            db.execute("BEGIN IMMEDIATE")  # one transaction for all that was queued meanwhile
            db.executemany(_INSERT, rows)
            db.execute("COMMIT")
        except sqlite3.Error as error:
            self._error = error
            if db.in_transaction:
                db.execute("ROLLBACK")
        for key, text, _ in rows:
            if self._pending.get(key) is text:  # not put again meanwhile
                del self._pending[key]


def _connect(path: Path) -> sqlite3.Connection:
    # Autocommit (transactions are explicit); each connection is used by one thread only.
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA busy_timeout=10000")
    return db
