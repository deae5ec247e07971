"""Providers by prefix: `make_provider("openai/gpt-4o-mini", base_url=...)`.

A provider module registers one factory under its prefix (`openai`, `anthropic`, `hf`, `mock`,
`baseline`); the factory takes the part after the first slash and keyword options (base URLs,
key env var, ...). Factories import their SDK only when called, so naming a provider costs
nothing until it is used.
"""

from __future__ import annotations

from typing import Any, Protocol

from attunebench.kinds import ModelKind, prefix_kind
from attunebench.models.base import Provider
from attunebench.registry import Registry, RegistryError


class ProviderFactory(Protocol):
    def __call__(self, model: str, **options: Any) -> Provider: ...


PROVIDERS: Registry[ProviderFactory] = Registry("provider")
ROLE_PREFIX = "person"  # `person/SPEC`: SPEC in the person's role (engine.person)


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
    """How run.json and reports label this spec, from the one table of kinds
    (`attunebench.kinds`); a model in the person's role (`person/SPEC`) is SPEC's kind."""
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
