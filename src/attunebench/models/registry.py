"""Providers by prefix: `make_provider("openai/gpt-4o-mini", base_url=...)`. A provider module
registers its class (or a factory) under its prefix; SDKs are imported only when a model is
made."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from attunebench.frozen import problem_text
from attunebench.kinds import ModelKind, prefix_kind
from attunebench.models.base import Provider
from attunebench.registry import Registry, RegistryError

# A provider class, or a function making one: called with the model and its options.
ProviderFactory = Callable[..., Provider]
PROVIDERS: Registry[ProviderFactory] = Registry("provider")
ROLE_PREFIX = "person"  # `person/SPEC`: SPEC in the person's role (engine.person)
Options = TypeVar("Options", bound=BaseModel)


class ProviderConfigError(ValueError):
    """A provider cannot be made as configured (bad spec, missing key, unreachable server)."""


class SpecError(ProviderConfigError):
    """A model spec is not `provider/model`, or names an unknown provider."""


def parse_spec(spec: str) -> tuple[str, str]:
    """Split `provider/model` at its first slash (model names may hold slashes themselves).

    >>> parse_spec("openai/meta-llama/Llama-3-8B")
    ('openai', 'meta-llama/Llama-3-8B')
    """
    prefix, slash, model = spec.partition("/")
    if not slash or not prefix or not model:
        raise SpecError(f"model spec {spec!r} is not of the form provider/model")
    return prefix, model


def spec_kind(spec: str) -> ModelKind:
    """How run.json and reports label a spec (`attunebench.kinds`); `person/SPEC` is SPEC's."""
    prefix, model = parse_spec(spec)
    return spec_kind(model) if prefix == ROLE_PREFIX and "/" in model else prefix_kind(prefix)


def make_provider(spec: str, **options: Any) -> Provider:
    """Build the provider a spec names, passing `options` to its factory."""
    prefix, model = parse_spec(spec)
    try:
        factory = PROVIDERS.get(prefix)
    except RegistryError as error:
        raise SpecError(f"model spec {spec!r}: {error}") from None
    return factory(model, **options)


def spec_options(kind: type[Options], spec: str, given: dict[str, Any]) -> Options:
    """A provider's options read into `kind`; every problem in one line naming the spec."""
    try:
        return kind.model_validate(given)
    except ValidationError as error:
        problems = "; ".join(
            f"option {'.'.join(map(str, e['loc'])) or '(all)'}: {problem_text(e)}"
            for e in error.errors()
        )
        raise SpecError(f"model spec {spec!r}: {problems}") from None
