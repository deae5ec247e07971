"""What every task shares: option checks, call bookkeeping, and record construction.

Status rules (the same in every task): a call that failed after the engine's retries gives a
`failed` record with the error and no score; an answer that does not parse gives an `invalid`
record with the raw output and score 0.0 (it counts against the model); otherwise `ok`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attunebench.models.base import GenerateParams
from attunebench.records import ItemRecord, Status, Verdict
from attunebench.tasks.base import CallResult, Item

# JSON answers are short; asking for JSON mode helps servers that support it.
JSON_PARAMS = GenerateParams(temperature=0.0, max_tokens=300, json_mode=True)
REPLY_PARAMS = GenerateParams(temperature=0.0, max_tokens=400)


def check_choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {value!r})")
    return value


def usage(results: Sequence[CallResult]) -> dict[str, Any]:
    """Calls, cache hits, tokens, cost and latency summed over an item's calls."""
    return {
        "calls": len(results),
        "cache_hits": sum(r.cache_hit for r in results),
        "input_tokens": sum(r.input_tokens for r in results),
        "output_tokens": sum(r.output_tokens for r in results),
        "cost_usd": sum(r.cost_usd for r in results),
        "latency_s": sum(r.latency_s for r in results),
    }


def joined_raw(outputs: Sequence[tuple[str, str | None]]) -> str:
    """Several raw outputs of one item in one readable string, each under its label."""
    return "\n".join(f"--- {label} ---\n{text or ''}" for label, text in outputs)


def failure_message(results: Sequence[tuple[str, CallResult]]) -> str:
    return "; ".join(f"{label}: {r.error or 'no output'}" for label, r in results if not r.ok)


def record(
    item: Item,
    model: str,
    status: Status,
    results: Sequence[CallResult],
    *,
    prediction: Any = None,
    gold: Any = None,
    score: float | None = None,
    scores: dict[str, float | None] | None = None,
    raw_output: str | None = None,
    error: str | None = None,
    verdicts: Sequence[Verdict] = (),
    meta: dict[str, Any] | None = None,
) -> ItemRecord:
    return ItemRecord(
        task=item.task,
        model=model,
        conversation_id=item.conversation.id,
        turn_index=item.turn_index,
        item_id=item.item_id,
        variant=item.variant,
        status=status,
        prediction=prediction,
        gold=gold,
        score=score,
        scores=scores or {},
        raw_output=raw_output,
        error=error,
        verdicts=tuple(verdicts),
        meta=meta or {},
        **usage(results),
    )
