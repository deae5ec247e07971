"""The content-addressed response cache: SQLite in WAL mode, JSON values, never pickle.

A key is the SHA-256 of the canonical JSON of everything that decides a model's output: its
cache identity (spec, what the server runs, output-changing options), the messages, the
sampling parameters, the prompt template's id and version, the item and its hint. Nothing that
only changes how a call travels (base URLs, timeouts, concurrency) enters it, so moving a model
to another replica keeps its cache. Generation and judging share one cache: a judge is a model.

Only successful outputs are stored. Writes commit at once (WAL, synchronous=NORMAL: a killed
process keeps every committed row) so a resumed run never repeats a call that came back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
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


class ResponseCache:
    """One SQLite file, safe to share between runs and processes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit: each put is its own short transaction. Calls come from one event loop.
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(_SCHEMA)

    def get(self, key: str) -> CachedOutput | None:
        row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value = json.loads(row[0])
        return CachedOutput(
            text=value["text"],
            input_tokens=value["input_tokens"],
            output_tokens=value["output_tokens"],
            latency_s=value["latency_s"],
            cost_usd=value["cost_usd"],
            finish_reason=value.get("finish_reason"),
        )

    def put(self, key: str, output: ModelOutput, cost_usd: float) -> None:
        value = {
            "text": output.text,
            "input_tokens": output.input_tokens,
            "output_tokens": output.output_tokens,
            "latency_s": output.latency_s,
            "cost_usd": cost_usd,
            "finish_reason": output.finish_reason,
        }
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, value, created) VALUES (?, ?, ?)",
            (key, json.dumps(value, ensure_ascii=False), time.time()),
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()
