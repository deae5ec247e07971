"""What every hosted API's provider (`anthropic/`, `openai/`) shares: its options, declared
once (docs/architecture.md), and its batch mode. A provider's enqueued-token limit is the
account's, per model: entries of one run that batch the same model on the same server split it
(`share_batch_budget`), each holding its share."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from attunebench.models.base import BatchCounts
from attunebench.models.batch_journal import JOURNAL_FILE
from attunebench.models.batching import BatchAPI, BatchQueue, BatchTiming
from attunebench.models.openai_wire import URLs

DEFAULT_TIMEOUT_S = 120.0


class HostedOptions(TypedDict, total=False):
    """Where the API is served, its key (`api_key`, else the variable `api_key_env` names), a call's
    timeout, `sampling`, `capabilities`, and batch mode with its size, token budget and waits."""

    base_url: str | None
    base_urls: URLs | None
    api_key_env: str
    api_key: str | None
    timeout_s: float
    sampling: bool | None
    capabilities: dict[str, Any] | None
    batch: bool
    batch_size: int | None
    batch_tokens: int | None
    batch_poll_s: float
    batch_quiet_s: float
    batch_wait_s: float


HOSTED_OPTIONS = HostedOptions.__optional_keys__


def checked(owner: str, options: Mapping[str, Any]) -> None:
    """Refuse a keyword that is no hosted option as Python does, naming the misspelt option."""
    for key in options:
        if key not in HOSTED_OPTIONS:
            raise TypeError(f"{owner}() got an unexpected keyword argument '{key}'")


class BatchMode:
    """Mixed in before `Provider`; `batch_through` puts the provider in batch mode."""

    _batches: BatchQueue[Any] | None = None
    batch_shares = 1  # entries of the run that share this model's enqueued-token limit

    def batch_through(
        self, api: BatchAPI[Any], spec: str, options: HostedOptions, tokens: int | None = None
    ) -> None:
        """Send `spec`'s calls through `api`, at the entry's batch size, token budget and waits."""
        api.limits = dataclasses.replace(
            api.limits,
            max_requests=options.get("batch_size") or api.limits.max_requests,
            max_tokens=options.get("batch_tokens") or tokens,
        )
        timing = BatchTiming(
            quiet_s=options.get("batch_quiet_s", BatchTiming.quiet_s),
            wait_s=options.get("batch_wait_s", BatchTiming.wait_s),
            poll_s=options.get("batch_poll_s", BatchTiming.poll_s),
        )
        self._batches = BatchQueue(api, spec, timing)

    def batch_budget(self) -> int | None:
        """The input tokens its running batches may hold at once; None: no budget or no batches."""
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
