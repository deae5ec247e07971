"""Claude models as Anthropic describes them, and a call's budget: the thinking a request
states, the model's output limit, and the account's output-token rate limit (what is sent, and
why: docs/frontier.md).

`describe` reads the body of `GET /v1/models/{id}`; a body without `capabilities` is silent,
and the table is used. `OutputPacer`'s room is what the last headers said remained, plus what
has refilled since, less what this provider reserved since (calls the server may not have
counted yet), so a call that would earn a 429 waits its turn instead, and each answer wakes
the waiting."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError

from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.capabilities import (
    EFFORT_PAGE,
    EXTENDED,
    THINKING_TYPES_SDK,
    Capabilities,
    Citation,
)

THINKING_TYPES: Final = ("adaptive", "enabled", "disabled", "between_tools")
EFFORTS: Final = ("low", "medium", "high", "xhigh", "max")  # lowest first
# What turns thinking off, in the order tried: `between_tools` where `disabled` is refused
# (Sonnet 5.5).
THINKING_OFF: Final = ("disabled", "between_tools")
ALLOWANCE_EFFORT: Final = "high"  # the effort `thinking_allowance` is sized for
# The allowance at each effort, as a share of the allowance at high effort.
EFFORT_SHARE: Final[Mapping[str, float]] = {
    "low": 0.25,
    "medium": 0.5,
    "high": 1.0,
    "xhigh": 1.5,
    "max": 2.0,
}
RATE_FIX: Final = (
    "a lower params.effort (or no thinking), a lower concurrency, or batch = true "
    "(Message Batches are not paced by it)"
)
LIMIT_HEADER: Final = "anthropic-ratelimit-output-tokens-limit"
REMAINING_HEADER: Final = "anthropic-ratelimit-output-tokens-remaining"
MIN_BUDGET: Final = 1024  # the smallest `budget_tokens` the API takes
# How fast the anthropic SDK expects a non-streaming call to write (its
# `_calculate_nonstreaming_timeout`: an hour for 128,000 tokens): ~460 s for 16,400 tokens.
TOKENS_PER_HOUR: Final = 128_000
STREAMING_AFTER_S: Final = 600.0  # "Streaming is required for operations that may take longer
# than 10 minutes" (the SDK's `_calculate_nonstreaming_timeout`): about 21,300 tokens
# Where the documented constants above were read.
SOURCES: Final[Mapping[str, tuple[Citation, ...]]] = {
    "THINKING_TYPES": (THINKING_TYPES_SDK,),
    "EFFORTS": (EFFORT_PAGE,),
    "MIN_BUDGET": (EXTENDED,),
    "TOKENS_PER_HOUR": (Citation("anthropic SDK 2.17.0 _base_client.py", "2026-12-05"),),
    "STREAMING_AFTER_S": (Citation("anthropic SDK 2.17.0 _base_client.py", "2026-12-05"),),
}


def _supported(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("supported") is True


def describe(body: Mapping[str, Any], base: Capabilities) -> Capabilities | None:
    """The capabilities a models-endpoint body describes, over `base`; None: it is silent."""
    described = body.get("capabilities")
    if not isinstance(described, Mapping):
        return None
    thinking = described.get("thinking")
    types = thinking.get("types") if isinstance(thinking, Mapping) else None
    effort = described.get("effort")
    levels = effort if isinstance(effort, Mapping) and effort.get("supported") else {}
    update = {
        "thinking": [
            t for t in THINKING_TYPES if isinstance(types, Mapping) and _supported(types.get(t))
        ],
        "efforts": [level for level in EFFORTS if _supported(levels.get(level))],
        "max_output_tokens": body.get("max_tokens"),
        "max_input_tokens": body.get("max_input_tokens"),
        "lifecycle": body.get("lifecycle"),
        "source": "endpoint",
    }
    try:
        return Capabilities.model_validate({**base.model_dump(), **update})
    except ValidationError:
        return None  # a body this code cannot read says nothing it can use


def allowance(caps: Capabilities, effort: str | None) -> int:
    """The tokens a call that may think is given on top of its answer's budget.

    >>> allowance(Capabilities(thinking_allowance=16_000), "low")
    4000
    """
    sent = effort or caps.default_effort or ALLOWANCE_EFFORT
    return round(caps.thinking_allowance * EFFORT_SHARE.get(sent, 1.0))


def thinking_off(caps: Capabilities) -> str | None:
    """The thinking type that turns this model's thinking off; None: it always thinks."""
    return next((kind for kind in THINKING_OFF if kind in caps.thinking), None)


def effort_without_thinking(caps: Capabilities, effort: str | None) -> str | None:
    """`effort`, lowered to the highest at which the model turns thinking off."""
    ceiling = caps.thinking_off_max_effort
    if effort not in EFFORTS or ceiling not in EFFORTS:
        return effort
    return effort if EFFORTS.index(effort) <= EFFORTS.index(ceiling) else ceiling


def _asks_no_thinking(params: GenerateParams) -> bool:
    return params.thinking is None and params.thinking_budget is None


def _refusal(caps: Capabilities, params: GenerateParams) -> str | None:
    if params.thinking_budget is not None and "enabled" not in caps.thinking:
        return 'params.thinking_budget; use params.thinking = "adaptive"'
    if params.thinking == "adaptive" and "adaptive" not in caps.thinking:
        return 'params.thinking = "adaptive"; use params.thinking_budget'
    if params.effort is not None and params.effort not in caps.efforts:
        takes = ", ".join(caps.efforts) or "none"
        return f"params.effort {params.effort!r} (it takes: {takes})"
    return None


def thinking_fields(
    caps: Capabilities, params: GenerateParams, spec: str
) -> tuple[dict[str, Any], int]:
    """The `thinking` (and `output_config`) fields of a request, and the tokens its thinking may
    take; a parameter the model does not take is refused before any call."""
    refused = _refusal(caps, params)
    if refused is not None:
        raise ProviderError(f"{spec} does not take {refused}", retryable=False)
    off = thinking_off(caps) if _asks_no_thinking(params) else None
    effort = effort_without_thinking(caps, params.effort) if off else params.effort
    fields: dict[str, Any] = {}
    if effort is not None:
        fields["output_config"] = {"effort": effort}
    if params.thinking_budget is not None:
        fields["thinking"] = {"type": "enabled", "budget_tokens": params.thinking_budget}
        return fields, params.thinking_budget
    if off is not None:
        fields["thinking"] = {"type": off}
        return fields, 0
    thinks = allowance(caps, params.effort)
    if params.thinking == "adaptive" or "adaptive" in caps.thinking:
        fields["thinking"] = {"type": "adaptive"}
    elif "enabled" in caps.thinking:  # thinking that cannot be turned off, by a budget only
        fields["thinking"] = {"type": "enabled", "budget_tokens": max(MIN_BUDGET, thinks)}
        return fields, max(MIN_BUDGET, thinks)
    return fields, thinks  # no thinking type to state: it may think, so it gets the allowance


def thinking_note(caps: Capabilities, params: GenerateParams) -> str | None:
    """What a run is told at plan time of an entry that asks no thinking; None: sent as asked."""
    if not _asks_no_thinking(params) or not caps.thinking:
        return None
    off = thinking_off(caps)
    if off is None:
        effort = params.effort or caps.default_effort or ALLOWANCE_EFFORT
        return (
            "always thinks (it takes no thinking type that turns thinking off), so it is "
            f"asked for adaptive thinking: each call gets {allowance(caps, params.effort):,} "
            f"tokens of thinking allowance (effort {effort}) over params.max_tokens"
        )
    lowered = effort_without_thinking(caps, params.effort)
    if lowered != params.effort:
        return (
            f"params.effort {params.effort!r} with no thinking is sent as {lowered!r}: the "
            f"model turns thinking off only at effort {caps.thinking_off_max_effort} or lower"
        )
    return None


def unasked_thinking(caps: Capabilities) -> str:
    """The thinking type a call that asks no thinking states."""
    fields, _ = thinking_fields(caps, GenerateParams(), "")
    return str(fields.get("thinking", {}).get("type", "unstated"))


def call_timeout(timeout_s: float, max_tokens: int) -> float:
    """A call's timeout: the configured one, or longer when its budget takes longer to write.

    >>> round(call_timeout(120.0, 16_400))
    461
    """
    return max(timeout_s, 3600.0 * max_tokens / TOKENS_PER_HOUR)


def needs_streaming(max_tokens: int) -> bool:
    """Whether the SDK expects a call of this budget to take over 10 minutes, and so must stream.

    >>> needs_streaming(16_400), needs_streaming(32_300)
    (False, True)
    """
    return 3600.0 * max_tokens / TOKENS_PER_HOUR > STREAMING_AFTER_S


def over_output_limit(caps: Capabilities, asked: int, answer: int) -> str | None:
    """Why a call asking for `asked` tokens passes the model's output limit; None when it fits."""
    if caps.max_output_tokens is None or asked <= caps.max_output_tokens:
        return None
    return (
        f"a call asks for {asked_for(asked, answer)}, over the model's output limit of "
        f"{caps.max_output_tokens:,} tokens ({told_by(caps)}); fix its models-file entry: lower "
        "params.max_tokens, params.effort or params.thinking_budget"
    )


def told_by(caps: Capabilities) -> str:
    """Where the capabilities were read, for a stop line."""
    return "Anthropic's models endpoint" if caps.source == "endpoint" else "the table"


@dataclass(frozen=True, slots=True)
class OutputLimit:
    per_minute: int
    remaining: int


def _number(headers: Mapping[str, str], name: str) -> int | None:
    value = {k.lower(): v for k, v in headers.items()}.get(name)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def read_limit(headers: Mapping[str, str]) -> OutputLimit | None:
    """The output-token limit the headers announce, if they announce one.

    >>> read_limit({"anthropic-ratelimit-output-tokens-limit": "8000",
    ...             "anthropic-ratelimit-output-tokens-remaining": "7600"})
    OutputLimit(per_minute=8000, remaining=7600)
    """
    limit = _number(headers, LIMIT_HEADER)
    if limit is None or limit <= 0:
        return None
    remaining = _number(headers, REMAINING_HEADER)
    return OutputLimit(limit, limit if remaining is None else max(0, remaining))


class OutputPacer:
    """Waits for room under the announced limit; lets everything through until one is seen."""

    def __init__(self) -> None:
        self.limit: OutputLimit | None = None
        self._room = 0.0  # at `_since`, with the open reservations taken out
        self._since = 0.0
        self._tickets = itertools.count(1)
        self._open: dict[int, int] = {}  # ticket -> tokens, calls not yet answered
        self._wake: asyncio.Event | None = None

    async def reserve(self, tokens: int) -> int:
        """Wait until `tokens` fit (one that never can goes at once); the ticket to `settle`."""
        while self.limit is not None:
            per_minute, now = self.limit.per_minute, time.monotonic()
            room = min(float(per_minute), self._room + per_minute / 60.0 * (now - self._since))
            if room >= tokens or tokens > per_minute:
                self._room, self._since = room - tokens, now
                break
            if self._wake is None:
                self._wake = asyncio.Event()
            with contextlib.suppress(TimeoutError):  # refilled by then, or woken by an answer
                await asyncio.wait_for(self._wake.wait(), (tokens - room) * 60.0 / per_minute)
        ticket = next(self._tickets)
        self._open[ticket] = tokens
        return ticket

    def settle(self, ticket: int, headers: Mapping[str, str]) -> None:
        """The call `ticket` was answered with `headers` (none: it never reached the server)."""
        self._open.pop(ticket, None)
        found = read_limit(headers)
        if found is None:
            return
        since = sum(tokens for later, tokens in self._open.items() if later > ticket)
        self.limit = found
        self._room, self._since = float(found.remaining - since), time.monotonic()
        if self._wake is not None:
            self._wake.set()
            self._wake = None


def asked_for(asked: int, answer: int) -> str:
    """A call's budget, said in a stop line.

    >>> asked_for(16_300, 300)
    'max_tokens 16,300 (16,000 of them for thinking)'
    """
    thinking = asked - answer
    return f"max_tokens {asked:,}" + (f" ({thinking:,} of them for thinking)" if thinking else "")


def over_rate_limit(limit: OutputLimit | None, asked: int, answer: int) -> str | None:
    """Why a call asking for `asked` tokens can never start: over a minute's limit."""
    if limit is None or asked <= limit.per_minute:
        return None
    return (
        f"a call asks for {asked_for(asked, answer)}, more than the account's output-token "
        f"rate limit of {limit.per_minute:,} a minute (Anthropic reserves max_tokens when a "
        f"request starts); fix its models-file entry: {RATE_FIX}"
    )


def pacing_note(limit: OutputLimit | None, asked: int, concurrency: int) -> str | None:
    """What to say when `concurrency` calls of `asked` tokens at once pass the limit.

    >>> pacing_note(OutputLimit(8_000, 8_000), 512, 16)[:47]
    '16 calls at once of up to 512 output tokens pas'
    """
    if limit is None or asked * concurrency <= limit.per_minute:
        return None
    return (
        f"{concurrency} calls at once of up to {asked:,} output tokens pass the output-token "
        f"rate limit of {limit.per_minute:,} a minute: calls wait for room, paced by the "
        f"rate-limit headers; to go faster: {RATE_FIX}"
    )
