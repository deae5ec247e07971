"""The engine: turns a (dataset, tasks, models) plan into model calls and a run directory.

Scheduling by conversation, per-endpoint concurrency and rate limits, bounded retries, a
content-addressed SQLite cache, resume, a ledger of tokens and cost, and a progress bar.
"""

from attunebench.engine.cache import ResponseCache, cache_key
from attunebench.engine.person import Person  # registers the person/ role with the providers
from attunebench.engine.plan import task_names
from attunebench.engine.retry import RetryPolicy
from attunebench.engine.runner import RunConfig, RunResult, run
from attunebench.engine.shards import Shard, merge_shards, parse_shard
from attunebench.engine.wiring import default_cache_path
from attunebench.rundir import (
    RECORDS_FILE,
    RUN_FILE,
    RunDirError,
    read_ledger,
    read_records,
    read_run_info,
)

__all__ = [
    "RECORDS_FILE",
    "RUN_FILE",
    "Person",
    "ResponseCache",
    "RetryPolicy",
    "RunConfig",
    "RunDirError",
    "RunResult",
    "Shard",
    "cache_key",
    "default_cache_path",
    "merge_shards",
    "parse_shard",
    "read_ledger",
    "read_records",
    "read_run_info",
    "run",
    "task_names",
]
