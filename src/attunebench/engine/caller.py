"""The engine's side of `Caller`: every model call a task makes goes through here.

In order: merge the task's parameters over the model's, look in the cache, wait for a slot on
the model's endpoint, call with bounded retries, price the output, store it, count it. A call
that still fails comes back as a `CallResult` with `text=None` and the error: the task records
the item as `failed`, never as an answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from attunebench.engine.cache import ResponseCache, cache_key
from attunebench.engine.ledger import LedgerBook
from attunebench.engine.limits import Endpoint
from attunebench.engine.retry import RetriesExhausted, RetryPolicy, Sleep, with_retries
from attunebench.models.base import GenerateParams, Message, ModelOutput, Provider
from attunebench.models.hints import TaskHint
from attunebench.models.modelsfile import ModelEntry
from attunebench.records import PromptInfo
from attunebench.tasks.base import CallResult, CallRole, Item


@dataclass(frozen=True, slots=True)
class BoundModel:
    """A models-file entry with its provider made and its endpoint chosen."""

    entry: ModelEntry
    provider: Provider
    endpoint: Endpoint
    identity: dict[str, Any] = field(default_factory=dict)

    @property
    def cacheable(self) -> bool:
        # A provider whose answers depend on state outside the request (a fitted baseline)
        # can opt out of caching with `cacheable = False`.
        return bool(getattr(self.provider, "cacheable", True))


def storable(output: ModelOutput) -> ModelOutput:
    """The output with any lone surrogate (half a UTF-16 pair, which a JSON body can escape)
    turned into U+FFFD: the cache and records.jsonl are UTF-8 and cannot hold one."""
    try:
        output.text.encode("utf-8")
    except UnicodeEncodeError:
        text = output.text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return dataclasses.replace(output, text=text)
    return output


def merge_params(model: GenerateParams, task: GenerateParams | None) -> GenerateParams:
    """What a call is sent with: defaults, then what the task asks for (e.g. json_mode, a
    token budget), then what the models file sets for this model, which has the last word."""
    if task is None:
        return model
    return task.model_copy(update={name: getattr(model, name) for name in model.model_fields_set})


class Engine:
    """Implements `Caller` for all models of a run, sharing one cache and one ledger."""

    def __init__(
        self,
        models: Mapping[str, BoundModel],
        *,
        cache: ResponseCache | None,
        ledger: LedgerBook,
        policy: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.models = dict(models)
        self.cache = cache
        self.ledger = ledger
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random(0)

    async def call(
        self,
        model: str,
        messages: list[Message],
        *,
        prompt: PromptInfo,
        item: Item,
        role: CallRole = "subject",
        params: GenerateParams | None = None,
        hint: TaskHint | None = None,
    ) -> CallResult:
        bound = self.models.get(model)
        if bound is None:
            raise KeyError(f"task {item.task!r} called model {model!r}, which is not in this run")
        merged = merge_params(bound.entry.params, params)
        if hint is not None and not hint.item_key:
            hint = dataclasses.replace(hint, item_key=item.key)
        tally = (model, item.task, role)
        cache = self.cache if bound.cacheable else None
        key = ""
        if cache is not None:
            key = cache_key(
                identity=bound.identity, messages=messages, params=merged, prompt=prompt,
                item_key=item.key, hint=hint,
            )
            cached = cache.get(key)
            if cached is not None:
                self.ledger.cache_hit(tally)
                return CallResult(
                    text=cached.text, cache_hit=True, input_tokens=cached.input_tokens,
                    output_tokens=cached.output_tokens, cost_usd=cached.cost_usd,
                    latency_s=cached.latency_s,
                )

        async def attempt() -> ModelOutput:
            async with bound.endpoint.slot():
                return await bound.provider.generate(messages, merged, hint)

        try:
            output = await with_retries(
                attempt, self.policy, sleep=self._sleep, rng=self._rng,
                on_retry=lambda error, wait: self.ledger.retry(tally),
            )
        except RetriesExhausted as exhausted:
            self.ledger.failure(tally)
            return CallResult(text=None, error=str(exhausted))
        output = storable(output)
        cost = bound.entry.price.cost(output.input_tokens, output.output_tokens)
        self.ledger.call(
            tally, input_tokens=output.input_tokens, output_tokens=output.output_tokens,
            cost_usd=cost, latency_s=output.latency_s,
        )
        if cache is not None:
            cache.put(key, output, cost)
        return CallResult(
            text=output.text, input_tokens=output.input_tokens,
            output_tokens=output.output_tokens, cost_usd=cost, latency_s=output.latency_s,
        )


@dataclass(slots=True)
class ItemCaller:
    """The Caller one (item, model) evaluation gets: forwards to the engine, totals its calls."""

    engine: Engine
    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    async def call(
        self,
        model: str,
        messages: list[Message],
        *,
        prompt: PromptInfo,
        item: Item,
        role: CallRole = "subject",
        params: GenerateParams | None = None,
        hint: TaskHint | None = None,
    ) -> CallResult:
        result = await self.engine.call(
            model, messages, prompt=prompt, item=item, role=role, params=params, hint=hint
        )
        self.calls += 1
        self.cache_hits += int(result.cache_hit)
        self.input_tokens += result.input_tokens
        self.output_tokens += result.output_tokens
        self.cost_usd += result.cost_usd
        self.latency_s += result.latency_s
        return result

    def totals(self) -> dict[str, Any]:
        return {
            "calls": self.calls, "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd, "latency_s": self.latency_s,
        }
