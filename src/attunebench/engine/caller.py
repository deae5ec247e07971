"""The engine's calls: every query a task makes goes through here.

Merge the task's parameters over the model's, look in the cache, wait for a slot on the
model's endpoint, call with bounded retries, price the output, store it, count it. A call that
still fails comes back as an `Output` with the error: the record is `failed`, never an answer.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from attunebench.answerform import TaskHint
from attunebench.engine.cache import CachedOutput, ResponseCache, cache_key
from attunebench.engine.ledger import Key, LedgerBook
from attunebench.engine.limits import Endpoint
from attunebench.engine.retry import RetriesExhausted, RetryPolicy, Sleep, with_retries
from attunebench.engine.spend import SpendCap, call_cost
from attunebench.models.base import ChoiceOutput, GenerateParams, Message, ModelOutput, Provider
from attunebench.models.modelsfile import ModelEntry
from attunebench.records import ItemRecord, Tally
from attunebench.tasks.base import CallRole, ChoiceForm, Item, Output, Query

CHOICE_REASON = "choice"  # the finish reason under which a cached value holds probabilities


class Keeper(Protocol):
    """Where a run's calls are kept beyond its own process (a `run --ray` shard's driver), so
    that a stop loses at most the calls on the wire. `sending` may hold a call back, or raise
    to stop the run; `answered` gets the cache key ("" where not cached)."""

    async def sending(self, ledger: LedgerBook) -> None: ...

    async def answered(
        self, key: str, output: ModelOutput, cost_usd: float, ledger: LedgerBook
    ) -> None: ...


@dataclass(frozen=True, slots=True)
class BoundModel:
    """A models-file entry with its provider made and its endpoint chosen."""

    entry: ModelEntry
    provider: Provider
    endpoint: Endpoint
    identity: dict[str, Any] = field(default_factory=dict)

    @property
    def choosing(self) -> bool:
        """Whether this model answers choice questions by option probabilities."""
        return self.entry.answer == "choice"


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


def as_model_output(choice: ChoiceOutput) -> ModelOutput:
    """A choice answer in the cache's shape: its probabilities as JSON text."""
    text = json.dumps({"probabilities": choice.probabilities, "floored": list(choice.floored)})
    return ModelOutput(
        text=text,
        input_tokens=choice.input_tokens,
        output_tokens=choice.output_tokens,
        latency_s=choice.latency_s,
        finish_reason=CHOICE_REASON,
    )


def output_of(value: ModelOutput | CachedOutput, cost: float, cache_hit: bool) -> Output:
    common: dict[str, Any] = {
        "cache_hit": cache_hit,
        "input_tokens": value.input_tokens,
        "output_tokens": value.output_tokens,
        "cost_usd": cost,
        "latency_s": value.latency_s,
        "reasoning_tokens": value.reasoning_tokens,
        "thinking": value.thinking,
    }
    if value.finish_reason == CHOICE_REASON:
        decoded = json.loads(value.text)
        return Output(
            probabilities=decoded["probabilities"], floored=tuple(decoded["floored"]), **common
        )
    return Output(text=value.text, **common)


class Engine:
    """Answers queries for all models of a run, sharing one cache and one ledger."""

    def __init__(
        self,
        models: Mapping[str, BoundModel],
        *,
        cache: ResponseCache | None,
        ledger: LedgerBook,
        policy: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        spend: SpendCap | None = None,
        keeper: Keeper | None = None,
    ) -> None:
        self.models = dict(models)
        self.spend = spend  # the run's dollar cap, if it has one
        self.cache = cache
        self.ledger = ledger
        self.keeper = keeper
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random(0)

    async def ask(self, model: str, query: Query, item: Item[Any], role: CallRole) -> Output:
        bound = self.models.get(model)
        if bound is None:
            raise KeyError(f"task {item.task!r} asked model {model!r}, which is not in this run")
        params = merge_params(bound.entry.params, query.params)
        form = query.choice if bound.choosing else None
        messages = list(form.messages) if form is not None else query.messages
        hint = hint_for(bound, query, item)
        tally = (model, item.task, role)
        cache = self.cache if bound.provider.cacheable else None
        key = ""
        if cache is not None:
            key = cache_key(
                identity=bound.identity,
                messages=messages,
                params=params,
                prompt=query.prompt,
                item_key=f"{item.key}|{query.key}",
                hint=hint,
                choice_keys=form.keys if form is not None else None,
            )
            cached = cache.get(key)
            if cached is not None:
                self.ledger.cache_hit(tally)
                return output_of(cached, cached.cost_usd, cache_hit=True)
        held = self._reserve(bound, messages, params)
        try:
            output = storable(await self._call(bound, messages, params, hint, form, tally))
        except RetriesExhausted as exhausted:
            self.ledger.failure(tally)
            self._settle(held, 0.0)
            return Output(error=str(exhausted), permanent=exhausted.error.permanent)
        except BaseException:
            self._settle(held, 0.0)
            raise
        cost = self._count(bound, output, tally)
        self._settle(held, cost)
        if cache is not None:
            cache.put(key, output, cost)
        if self.keeper is not None:
            await self.keeper.answered(key if cache is not None else "", output, cost, self.ledger)
        return output_of(output, cost, cache_hit=False)

    def _reserve(self, bound: BoundModel, messages: list[Message], params: GenerateParams) -> float:
        """Hold the call's most against the run's cap (`CapReached` past it); what was held."""
        if self.spend is None:
            return 0.0
        held = call_cost(bound, messages, params)
        self.spend.reserve(held)
        return held

    def _settle(self, held: float, cost: float) -> None:
        if self.spend is not None:
            self.spend.settle(held, cost)

    async def _call(
        self,
        bound: BoundModel,
        messages: list[Message],
        params: GenerateParams,
        hint: TaskHint | None,
        form: ChoiceForm | None,
        tally: Key,
    ) -> ModelOutput:
        """The provider's answer, each try waiting for a slot; `RetriesExhausted` if none."""

        async def attempt() -> ModelOutput:
            async with bound.endpoint.slot():
                if not bound.entry.batch:  # a batch's requests are journaled, never lost
                    self.ledger.sent(tally)
                if self.keeper is not None:
                    try:
                        await self.keeper.sending(self.ledger)
                    except BaseException:
                        self.ledger.settle(tally)  # held back: never made
                        raise
                if form is None:
                    return await bound.provider.generate(messages, params, hint)
                chosen = await bound.provider.choose(messages, form.keys, params, hint)
                return as_model_output(chosen)

        return await with_retries(
            attempt,
            self.policy,
            sleep=self._sleep,
            rng=self._rng,
            on_retry=lambda: self.ledger.retry(tally),
        )

    def _count(self, bound: BoundModel, output: ModelOutput, tally: Key) -> float:
        """The call's price, entered in the ledger with its tokens and latency."""
        cost = bound.entry.price.cost(
            output.input_tokens,
            output.output_tokens,
            output.reasoning_tokens,
            batched=output.batched,
            cached_input_tokens=output.cached_input_tokens,
            cache_write_tokens=output.cache_write_tokens,
            cache_write_1h_tokens=output.cache_write_1h_tokens,
        )
        self.ledger.call(tally, output, cost)
        return cost


def hint_for(bound: BoundModel, query: Query, item: Item[Any]) -> TaskHint | None:
    """The query's hint, addressed to its item and query where the task left that out, and
    with the gold for a provider that reads it (the oracle)."""
    hint = query.hint
    if hint is not None and not hint.item_key:
        hint = dataclasses.replace(hint, item_key=f"{item.key}|{query.key}")
    if hint is not None and not hint.task:
        hint = dataclasses.replace(hint, task=item.task)
    if hint is not None and bound.provider.reads_gold:
        hint = dataclasses.replace(hint, gold=item.gold.model_dump(mode="json"))
    return hint


# What an item's record says of its calls: the ledger's counts that `ItemRecord` holds.
ITEM_TOTALS = frozenset(Tally.model_fields) & frozenset(ItemRecord.model_fields)


@dataclass(slots=True)
class ItemCaller:
    """What one (item, model) evaluation asks through: the engine, its calls totalled."""

    engine: Engine
    tally: Tally = field(default_factory=Tally)

    async def ask(self, model: str, query: Query, item: Item[Any], role: CallRole) -> Output:
        output = await self.engine.ask(model, query, item, role)
        tally = self.tally
        tally.calls += 1
        tally.cache_hits += int(output.cache_hit)
        tally.input_tokens += output.input_tokens
        tally.output_tokens += output.output_tokens
        tally.reasoning_tokens += output.reasoning_tokens
        tally.cost_usd += output.cost_usd
        tally.latency_s += output.latency_s
        return output

    def totals(self) -> dict[str, Any]:
        return self.tally.model_dump(include=set(ITEM_TOTALS))
