"""What a provider with a batch mode (anthropic/, openai/) shares: its calls go through a
`BatchQueue` when it is made with `batch = true`, whose journal lives in the run directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attunebench.models.base import BatchCounts
from attunebench.models.batch_journal import JOURNAL_FILE
from attunebench.models.batching import BatchQueue


class BatchMode:
    """Mixed in before `Provider`; the provider sets `_batches` in batch mode."""

    _batches: BatchQueue[Any] | None = None

    def batch_endpoint(self, servers: str) -> str:
        """What the engine's concurrency limit is shared by: a batch model's calls wait in
        batches, apart from any live model's on the same servers."""
        return f"batch {servers}" if self._batches is not None else servers

    def attach(self, rundir: Path) -> None:
        if self._batches is not None:
            self._batches.attach(rundir / JOURNAL_FILE)

    def batch_counts(self) -> BatchCounts | None:
        return self._batches.counts() if self._batches is not None else None

    async def close_batches(self) -> None:
        if self._batches is not None:
            await self._batches.aclose()
