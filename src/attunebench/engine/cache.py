"""The content-addressed response cache: SQLite in WAL mode, JSON values, never pickle.

A key is the SHA-256 of the canonical JSON of everything that decides a model's output, and
nothing that only changes how a call travels (base URLs, timeouts), so moving a model to
another replica keeps its cache. Only successful outputs are stored, by a writer thread that
commits what was put every 50 ms: a commit now and then checkpoints the WAL, with fsyncs that
can take tens of milliseconds, which on the event loop would stall every call in flight.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attunebench.answerform import TaskHint
from attunebench.data.jsonl import canonical_json
from attunebench.models.base import GenerateParams, Message, ModelOutput
from attunebench.records import PromptInfo

KEY_VERSION = 2  # bump when the key's recipe changes, so old rows are never misread
COMMIT_EVERY_S = 0.05  # how long a put waits, at most, for the writer thread to commit it

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
    choice_keys: tuple[str, ...] | None = None,
) -> str:
    """The key of one call (`choice_keys` for a choice-mode call). A model constrained to its
    answers' schema keys on the schema too: it can change with the task's code under the same
    prompt."""
    content: dict[str, Any] = {
        "v": KEY_VERSION,
        "model": identity,
        "messages": [message.to_dict() for message in messages],
        "params": params.key_fields(),
        "prompt": [prompt.id, prompt.version],
        "item": item_key,
        "hint": None if hint is None else _hint_fields(hint),
        "choice": None if choice_keys is None else list(choice_keys),
    }
    if identity.get("json_schema") and hint is not None and hint.form is not None:
        content["schema"] = hint.schema()
    return hashlib.sha256(canonical_json(content).encode()).hexdigest()


def _hint_fields(hint: TaskHint) -> dict[str, object]:
    # Shallow: the fields are strings, tuples and flat dicts, which JSON takes as they are;
    # dataclasses.asdict would deep-copy them, at half the cost of the whole key. The answer
    # form is the task's code, not the item's content (the prompt's id and version cover it);
    # `task` is the item key's first part, and `subject` is left out because a verdict on a
    # text does not depend on who is said to have written it (keys made before either field
    # existed stay valid).
    return {
        f.name: getattr(hint, f.name)
        for f in dataclasses.fields(hint)
        if f.name not in ("form", "task", "subject")
    }


def cache_value(output: ModelOutput, cost_usd: float) -> str:
    """The JSON text the cache keeps for an answer."""
    value = {
        "text": output.text,
        "input_tokens": output.input_tokens,
        "output_tokens": output.output_tokens,
        "latency_s": output.latency_s,
        "cost_usd": cost_usd,
        "finish_reason": output.finish_reason,
    }
    if output.reasoning_tokens:
        value["reasoning_tokens"] = output.reasoning_tokens
    if output.thinking is not None:
        value["thinking"] = output.thinking
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class CachedOutput:
    text: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float
    finish_reason: str | None = None
    reasoning_tokens: int = 0
    thinking: str | None = None


class CacheWriteError(RuntimeError):
    """The writer thread could not store values; raised by the next put, flush or close."""


Row = tuple[str, str, float]  # key, JSON value, created


class ResponseCache:
    """One SQLite file, safe to share between runs and processes; called from one thread."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = _connect(self.path)  # for reads; writes go through _writer_db
        self._db.execute(_SCHEMA)
        self._writer_db = _connect(self.path)
        self._pending: dict[str, str] = {}  # put and not yet committed: `get` looks here first
        self._rows: list[Row] = []  # put since the writer last took them
        self._rows_lock = threading.Lock()
        self._commit_lock = threading.Lock()  # the writer thread's commits and flush's
        self._error: sqlite3.Error | None = None
        self._closing = threading.Event()
        self._writer = threading.Thread(target=self._write_loop, name="cache-writer", daemon=True)
        self._writer.start()

    def get(self, key: str) -> CachedOutput | None:
        text = self._pending.get(key)
        if text is None:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            text = row[0]
        return CachedOutput(**json.loads(text))  # as `cache_value` wrote it

    def put(self, key: str, output: ModelOutput, cost_usd: float) -> None:
        self.put_value(key, cache_value(output, cost_usd))

    def put_value(self, key: str, text: str) -> None:
        """Store a value as `cache_value` writes it (one another process made, say)."""
        self._raise_if_failed()
        self._pending[key] = text
        with self._rows_lock:
            self._rows.append((key, text, time.time()))

    def image(self) -> bytes:
        """The whole database as one file's bytes, every value put so far in it."""
        self.flush()
        return self._db.serialize()

    def flush(self) -> None:
        """Commit every value put so far, now."""
        self._commit_pending()
        self._raise_if_failed()

    def __len__(self) -> int:
        self.flush()
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        if not self._closing.is_set():
            self._closing.set()
            self._writer.join()
            self._commit_pending()
            self._writer_db.close()
            self._db.close()
        self._raise_if_failed()

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise CacheWriteError(f"cannot write to the cache {self.path}: {self._error}")

    def _write_loop(self) -> None:
        # A commit every COMMIT_EVERY_S rather than one per put: a thread woken per put would
        # wrestle the event loop for the GIL on every call.
        while not self._closing.wait(COMMIT_EVERY_S):
            self._commit_pending()

    def _commit_pending(self) -> None:
        with self._commit_lock:
            with self._rows_lock:
                rows, self._rows = self._rows, []
            if not rows:
                return
            db = self._writer_db
            try:
                db.execute("BEGIN IMMEDIATE")
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


def merge_caches(target: Path, sources: Iterable[Path]) -> int:
    """Copy into the cache at `target` every answer the caches at `sources` hold that it
    lacks; how many were added (the keys are content hashes: one there is the same answer)."""
    db = _connect(target)
    try:
        db.execute(_SCHEMA)
        before = db.total_changes
        for source in sources:
            db.execute("ATTACH DATABASE ? AS shard", (str(source),))
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT OR IGNORE INTO responses SELECT * FROM shard.responses")
                db.execute("COMMIT")
            except sqlite3.Error:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            finally:
                db.execute("DETACH DATABASE shard")
        return db.total_changes - before
    finally:
        db.close()
