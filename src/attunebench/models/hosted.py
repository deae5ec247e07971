"""The options every hosted API's provider takes (`anthropic/`, `openai/`), declared once.

A provider's signature takes them as `**options: Unpack[HostedOptions]` beside its own; the
models file's misspelt-option error lists them from there (`modelsfile._option_names`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypedDict, TypeVar

from attunebench.models.batching import BatchAPI, BatchQueue, BatchTiming
from attunebench.models.openai_wire import URLs

DEFAULT_TIMEOUT_S = 120.0
R = TypeVar("R")


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
    """Refuse a keyword that is not a hosted option as Python does, so the models file's error
    names the misspelt option."""
    for key in options:
        if key not in HOSTED_OPTIONS:
            raise TypeError(f"{owner}() got an unexpected keyword argument '{key}'")


def batch_queue(
    api: BatchAPI[R], spec: str, options: HostedOptions, tokens: int | None = None
) -> BatchQueue[R]:
    """The queue that sends `spec`'s calls through `api`, at the entry's batch size, its
    enqueued-token budget (else `tokens`) and its waits (else `BatchTiming`'s)."""
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
    return BatchQueue(api, spec, timing)
