"""The options every hosted API's provider takes (`anthropic/`, `openai/`), declared once.

A provider's signature takes them as `**options: Unpack[HostedOptions]` beside its own; the
models file's misspelt-option error lists them from there (`modelsfile.option_names`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from attunebench.models.batching import BatchTiming
from attunebench.models.openai_wire import URLs

DEFAULT_TIMEOUT_S = 120.0


class HostedOptions(TypedDict, total=False):
    """Where the API is served (`base_url`, or `base_urls` to spread calls over), its key
    (`api_key`, else the variable `api_key_env` names), a call's timeout, whether temperature
    and top_p are sent (`sampling`; unset: as the capability table says), what the model
    accepts over its table's entry (`capabilities`), and batch mode (`batch`) with its batch
    size, enqueued-token budget and `BatchTiming`'s waits."""

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
    """Refuse a keyword that is not a hosted option as Python refuses an unknown keyword (a
    TypeError naming it), so the models file's error says which option is misspelt."""
    for key in options:
        if key not in HOSTED_OPTIONS:
            raise TypeError(f"{owner}() got an unexpected keyword argument '{key}'")


def batch_timing(options: HostedOptions) -> BatchTiming:
    """The batch queue's waits, each the option given or `BatchTiming`'s default."""
    return BatchTiming(
        quiet_s=options.get("batch_quiet_s", BatchTiming.quiet_s),
        wait_s=options.get("batch_wait_s", BatchTiming.wait_s),
        poll_s=options.get("batch_poll_s", BatchTiming.poll_s),
    )
