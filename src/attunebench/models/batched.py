"""What a provider with a batch mode (anthropic/, openai/) shares: its calls go through a
`BatchQueue` when it is made with `batch = true`, whose journal lives in the run directory.

A provider's enqueued-token limit is the account's, per model: entries of one run that batch
the same model on the same server split it (`share_batch_budget`), each holding its share."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from attunebench.models.base import BatchCounts
from attunebench.models.batch_journal import JOURNAL_FILE
from attunebench.models.batching import BatchQueue


class BatchMode:
    """Mixed in before `Provider`; the provider sets `_batches` in batch mode."""

    _batches: BatchQueue[Any] | None = None
    batch_shares = 1  # entries of the run that share this model's enqueued-token limit

    def batch_budget(self) -> int | None:
        """The input tokens this provider's running batches may hold at once; None: no
        budget (or no batch mode)."""
        return self._batches.api.limits.max_tokens if self._batches is not None else None

    def share_batch_budget(self, shares: int) -> None:
        """Hold `1/shares` of the budget: `shares` entries batch this model at once."""
        budget = self.batch_budget()
        if self._batches is None or budget is None or shares <= 1:
            return
        api = self._batches.api
        api.limits = dataclasses.replace(api.limits, max_tokens=budget // shares)
        self.batch_shares = shares

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
