"""Making a run's models: providers from their specs, endpoints shared by models on one server,
a reachability check, a pre-flight call per model (a refused parameter stops the run here,
named with its fix), and what each hosted model was found to accept (`Found`, which a `run
--ray` shard adopts instead of a pre-flight of its own).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, cast

from attunebench.engine.caller import BoundModel
from attunebench.engine.limits import Endpoint
from attunebench.models.base import Provider
from attunebench.models.capabilities import Capabilities
from attunebench.models.claude_models import unasked_thinking
from attunebench.models.hosted import BatchMode
from attunebench.models.modelsfile import ModelEntry, ModelsFileError, option_error
from attunebench.models.registry import ProviderConfigError, SpecError, make_provider
from attunebench.tasks import load_tasks
from attunebench.userdirs import user_cache


class Found(TypedDict):
    """What the pre-flight found of one model, as plain data (it travels between processes)."""

    capabilities: dict[str, Any] | None
    adapted: dict[str, str]


def default_cache_path() -> Path:
    """ATTUNEBENCH_CACHE, else the user's cache folder: shared by every run on this machine."""
    return user_cache("cache.sqlite", "ATTUNEBENCH_CACHE")


def _unique(entries: Sequence[ModelEntry]) -> dict[str, ModelEntry]:
    by_name: dict[str, ModelEntry] = {}
    for entry in entries:
        if by_name.setdefault(entry.name, entry) != entry:
            raise ProviderConfigError(f"two different models are both called {entry.name!r}")
    return by_name


async def bind_models(
    entries: Sequence[ModelEntry],
    *,
    concurrency: int,
    overrides: Mapping[str, Provider],
    check: bool,
    probe: bool = True,
) -> dict[str, BoundModel]:
    """Every model by name, ready to call; `overrides` supplies ready-made providers by name.
    `check`: each server reached, and (`probe`) each model's pre-flight made."""
    made: dict[str, tuple[ModelEntry, Provider]] = {}
    try:
        for name, entry in _unique(entries).items():
            provider = overrides.get(name) or _make(entry)
            made[name] = (entry, provider)
        endpoints = _endpoints(made, concurrency)
        _share_batch_budgets(made)
        if check:
            await _check_reachable(made)
            if probe:
                await _probe(made, {})
    except BaseException:
        await asyncio.gather(*(provider.aclose() for _, provider in made.values()))
        raise
    return {
        name: BoundModel(
            entry,
            provider,
            endpoints[name],
            {**entry.cache_identity(), **provider.cache_identity()},
        )
        for name, (entry, provider) in made.items()
    }


def _make(entry: ModelEntry) -> Provider:
    try:
        provider = make_provider(entry.spec, **entry.provider_options())
        named = provider.tasks_named()  # one no task has is misspelt: refused, not ignored
        tasks = load_tasks().names() if named else ()
        for task in named:
            if task not in tasks:
                raise SpecError(f"{task!r} is not a task it answers ({', '.join(tasks)})")
        return provider
    except TypeError as error:  # a provider's keyword options: a misspelt one is the user's
        raise option_error(entry, error) from None
    except ProviderConfigError as error:
        # named by its spec, not by a models file (a fitted baseline's shortened: short_names)
        if entry.name == entry.spec or entry.name.startswith(entry.spec.partition("?")[0]):
            raise
        raise ModelsFileError(f"models.{entry.name}: {error}") from None


def _endpoints(
    made: Mapping[str, tuple[ModelEntry, Provider]], concurrency: int
) -> dict[str, Endpoint]:
    """One Endpoint per server: the most generous concurrency and the strictest rate asked,
    and never more calls than a server has slots for (queued there, they would time out)."""
    groups: dict[str, list[tuple[ModelEntry, Provider]]] = {}
    for entry, provider in made.values():
        groups.setdefault(provider.endpoint, []).append((entry, provider))
    shared = {}
    for endpoint, group in groups.items():
        rates = [e.rate_limit for e, _ in group if e.rate_limit is not None]
        limit = max(e.endpoint_concurrency(concurrency) for e, _ in group)
        slots = [p.slots for _, p in group if p.slots is not None]
        shared[endpoint] = Endpoint(endpoint, min([limit, *slots]), min(rates) if rates else None)
    return {name: shared[provider.endpoint] for name, (_, provider) in made.items()}


def _share_batch_budgets(made: Mapping[str, tuple[ModelEntry, Provider]]) -> None:
    """Entries that batch one model on one server split its enqueued-token budget, which the
    account holds per model, not per entry."""
    groups: dict[tuple[str, str], list[BatchMode]] = {}
    for _, provider in made.values():
        if isinstance(provider, BatchMode) and provider.batch_budget() is not None:
            groups.setdefault((provider.endpoint, provider.spec), []).append(provider)
    for group in groups.values():
        for batching in group:
            batching.share_batch_budget(len(group))


async def _check_reachable(made: Mapping[str, tuple[ModelEntry, Provider]]) -> None:
    first: dict[str, Provider] = {}  # each server checked once, through its first model
    for _, provider in made.values():
        first.setdefault(provider.endpoint, provider)
    for provider in first.values():
        await provider.check()


async def _probe(
    made: Mapping[str, tuple[ModelEntry, Provider]], found: Mapping[str, Found]
) -> None:
    """Each model's pre-flight call, or what one made elsewhere found (`found`, by name)."""
    for name, (entry, provider) in made.items():
        if name in found:
            provider.adopt(found[name], entry.params)
            continue
        try:
            await provider.probe(entry.params, choice=entry.answer == "choice")
        except ProviderConfigError as error:
            where = "" if name == entry.spec else f"[models.{name}] "
            raise ProviderConfigError(f"{where}{error}") from None


async def preflight_models(
    bound: Mapping[str, BoundModel], found: Mapping[str, Found] | None = None
) -> None:
    """The pre-flight of models bound without it, or what the run's driver `found`."""
    await _probe({name: (b.entry, b.provider) for name, b in bound.items()}, found or {})


def preflight_found(bound: Mapping[str, BoundModel]) -> dict[str, Found]:
    """What each model's pre-flight found (plain JSON), for shards to adopt."""
    return {name: cast(Found, b.provider.found()) for name, b in bound.items()}


def adaptations(bound: Mapping[str, BoundModel]) -> dict[str, dict[str, str]]:
    """What the pre-flight changed in each model's requests, as run.json's `adapted`."""
    return {name: dict(b.provider.adapted) for name, b in bound.items() if b.provider.adapted}


def capability_records(bound: Mapping[str, BoundModel]) -> dict[str, dict[str, object]]:
    """What each hosted model accepts, as run.json keeps it under `capabilities`."""
    return {
        name: b.provider.capabilities.model_dump(mode="json")
        for name, b in bound.items()
        if b.provider.capabilities is not None
    }


def _accepts(caps: Capabilities) -> str:
    parts = []
    if caps.thinking:
        parts.append(f"thinking {', '.join(caps.thinking)} (unasked: {unasked_thinking(caps)})")
    parts += [f"effort {', '.join(caps.efforts)}"] if caps.efforts else []
    parts += [name for name in ("sampling", "logprobs") if getattr(caps, name)]
    if caps.max_output_tokens is not None:
        parts.append(f"output limit {caps.max_output_tokens:,} tokens")
    if caps.lifecycle not in (None, "active"):
        parts.append(str(caps.lifecycle))
    return "; ".join(parts) or "no optional fields"


def capability_lines(bound: Mapping[str, BoundModel]) -> list[str]:
    """Lines said before any item is called: what each hosted model accepts, its thinking,
    the rate limit that will pace it, its batch budget."""
    lines = []
    for name, b in bound.items():
        caps = b.provider.capabilities
        if caps is not None:
            where = "its models endpoint" if caps.source == "endpoint" else "the table"
            lines.append(f"capabilities: {name} ({b.provider.spec}) from {where}: {_accepts(caps)}")
        thinks = b.provider.thinking_note(b.entry.params)
        if thinks is not None:
            lines.append(f"thinking: {name} ({b.provider.spec}) {thinks}")
        note = b.provider.rate_note(b.endpoint.concurrency)
        if note is not None:
            lines.append(f"rate limit: {name}: {note}")
        if isinstance(b.provider, BatchMode) and (budget := b.provider.batch_budget()):
            shared = b.provider.batch_shares
            split = f", its share of {shared} entries batching this model" if shared > 1 else ""
            lines.append(f"batch: {name}: up to {budget:,} input tokens enqueued at once{split}")
    return lines


async def close_models(bound: Mapping[str, BoundModel]) -> None:
    providers = {id(b.provider): b.provider for b in bound.values()}
    await asyncio.gather(*(provider.aclose() for provider in providers.values()))
