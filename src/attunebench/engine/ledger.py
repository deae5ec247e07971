"""The ledger: what a run spent per (model, task, role), written to ledger.json.

A call is counted as it goes out (`sent`) and settles as a call, a retry or a failure; one
that never settles (the run was stopped while it was on the wire) is `lost`: made, perhaps
billed, its answer never kept, so that calls + retries + failures + lost is every request
sent. A resumed run starts from the ledger on disk, so ledger.json totals every session.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from attunebench.models.base import ModelOutput
from attunebench.records import Ledger, LedgerEntry, ServerUsage, Tally
from attunebench.tasks.base import CallRole

Key = tuple[str, str, CallRole]
TRUNCATED = frozenset({"length", "max_tokens"})  # finish reasons of an answer cut off


class LedgerBook:
    def __init__(self, start: Ledger | None = None) -> None:
        self._tallies: dict[Key, Tally] = {}
        self._in_flight: Counter[Key] = Counter()  # sent, not settled: lost if never settled
        self._servers_before: dict[str, ServerUsage] = {}
        self.add(start)
        self._start = self.totals()
        self._start_by_model = self.by_model()

    def add(self, ledger: Ledger | None) -> None:
        """Count what another ledger counted (an earlier session's, another shard's)."""
        if ledger is not None:
            for entry in ledger.entries:
                self._tally((entry.model, entry.task, entry.role)).add(entry)
            _add_servers(self._servers_before, ledger.servers)

    def session(self) -> Tally:
        """What this session added, without what earlier sessions of the run had counted."""
        return self.totals().minus(self._start)

    def _tally(self, key: Key) -> Tally:
        return self._tallies.setdefault(key, Tally())

    def sent(self, key: Key) -> None:
        """A call goes out; it is lost until it settles (`call`, `retry` or `failure`)."""
        self._tally(key)
        self._in_flight[key] += 1

    def settle(self, key: Key) -> None:
        """A call sent settles (or was held back after all): no longer on the wire."""
        if self._in_flight[key] > 0:
            self._in_flight[key] -= 1

    def call(self, key: Key, output: ModelOutput, cost_usd: float) -> None:
        """A call answered: its tokens, latency and cost (`cost_usd`, its price)."""
        self.settle(key)
        tally = self._tally(key)
        tally.calls += 1
        tally.input_tokens += output.input_tokens
        tally.output_tokens += output.output_tokens
        tally.reasoning_tokens += output.reasoning_tokens
        tally.cached_input_tokens += output.cached_input_tokens
        tally.cache_write_tokens += output.cache_write_tokens
        tally.truncated += int(output.finish_reason in TRUNCATED)
        tally.batch_calls += int(output.batched)
        tally.cost_usd += cost_usd
        tally.latency_s += output.latency_s

    def cache_hit(self, key: Key) -> None:
        self._tally(key).cache_hits += 1

    def retry(self, key: Key) -> None:
        self.settle(key)
        self._tally(key).retries += 1

    def failure(self, key: Key) -> None:
        self.settle(key)
        self._tally(key).failures += 1

    def _counted(self, key: Key, tally: Tally) -> Tally:
        """The tally with the calls still on the wire counted lost (as they stand now)."""
        if not self._in_flight[key]:
            return tally
        counted = Tally()
        counted.add(tally)
        counted.lost += self._in_flight[key]
        return counted

    def totals(self) -> Tally:
        total = Tally()
        for key, tally in list(self._tallies.items()):  # a copy: the progress bar reads it too
            total.add(self._counted(key, tally))
        return total

    def by_model(self) -> dict[str, Tally]:
        """Each model's tally, its judge calls included."""
        grouped: dict[str, Tally] = {}
        for (model, task, role), tally in list(self._tallies.items()):
            grouped.setdefault(model, Tally()).add(self._counted((model, task, role), tally))
        return grouped

    def session_by_model(self) -> dict[str, Tally]:
        """This session's tally of each model, its judge calls included (what it kept busy)."""
        start = self._start_by_model
        return {m: t.minus(start.get(m, Tally())) for m, t in self.by_model().items()}

    def to_ledger(self, servers: Mapping[str, ServerUsage] | None = None) -> Ledger:
        """The ledger of every session: this one's tallies, and its `servers` (per model)
        added to the earlier sessions'."""
        usage = dict(self._servers_before)
        _add_servers(usage, servers or {})
        entries = [
            LedgerEntry(model=key[0], task=key[1], role=key[2], **self._counted(key, t).counts())
            for key, t in sorted(self._tallies.items())
        ]
        return Ledger(entries=entries, servers=dict(sorted(usage.items())))


def _add_servers(usage: dict[str, ServerUsage], more: Mapping[str, ServerUsage]) -> None:
    """Each model's server usage added to `usage`'s (every session, or shard, starts its own)."""
    for model, server in more.items():
        usage[model] = usage[model].plus(server) if model in usage else server
