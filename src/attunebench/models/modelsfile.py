"""The models file (TOML): many models by name, with parameters, servers, keys and prices.

```toml
[models.gemma]
spec = "openai/gemma-3-270m"          # provider/model
base_urls = ["http://10.0.0.1:8000/v1", "http://10.0.0.2:8000/v1"]   # replicas, round-robin
api_key_env = "VLLM_KEY"              # the variable holding the key, never the key
identity = "gemma-3-270m-it-q4_k_m"   # what the server runs, when the model name is arbitrary
concurrency = 32                      # calls in flight, per base URL
rate_limit = 10.0                     # requests per second, all replicas together
price = { input = 0.10, output = 0.40 }   # USD per million tokens
params = { temperature = 0.0, max_tokens = 256 }
options = { json_mode = true, timeout_s = 60 }   # passed to the provider
answer = "generate"                   # or "choice": option probabilities (base models)
```

`--model NAME` picks an entry; `--model provider/model` needs no file. A model's cache identity
is its spec, `identity` and the options that can change its output; never its URLs, key,
concurrency, rate limit or timeouts.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from attunebench.models.base import GenerateParams
from attunebench.models.registry import SpecError, parse_spec

# Provider options that change how a call travels, not what comes back.
TRANSPORT_OPTIONS = frozenset({"timeout_s", "max_connections"})


class ModelsFileError(ValueError):
    """The models file cannot be read; the message names the file and the field."""


class Price(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(default=0.0, ge=0, description="USD per million input tokens")
    output: float = Field(default=0.0, ge=0, description="USD per million output tokens")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


class ModelEntry(BaseModel):
    """One model as the engine runs it: how to make its provider, and how to pace and price it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="What records and reports call this model.")
    spec: str
    params: GenerateParams = Field(default_factory=GenerateParams)
    base_url: str | None = None
    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    identity: str | None = None
    concurrency: int | None = Field(default=None, ge=1)
    rate_limit: float | None = Field(default=None, gt=0, description="requests per second")
    price: Price = Field(default_factory=Price)
    options: dict[str, Any] = Field(default_factory=dict)
    answer: Literal["generate", "choice"] = Field(
        default="generate",
        description="How choice questions are answered: generated text, or option probabilities.",
    )

    @field_validator("spec")
    @classmethod
    def _is_a_spec(cls, spec: str) -> str:
        parse_spec(spec)  # raises SpecError, a ValueError, which pydantic reports with the field
        return spec

    @classmethod
    def from_spec(cls, spec: str) -> ModelEntry:
        return cls(name=spec, spec=spec)

    def urls(self) -> tuple[str, ...]:
        return self.base_urls or ((self.base_url,) if self.base_url else ())

    def provider_options(self) -> dict[str, Any]:
        """Keyword options for the provider factory: only what this entry sets."""
        options: dict[str, Any] = dict(self.options)
        if self.urls():
            options["base_urls"] = list(self.urls())
        if self.api_key_env is not None:
            options["api_key_env"] = self.api_key_env
        return options

    def cache_identity(self) -> dict[str, Any]:
        """What, besides the spec, decides this model's outputs (enters every cache key)."""
        options = {k: v for k, v in self.options.items() if k not in TRANSPORT_OPTIONS}
        return {"spec": self.spec, "identity": self.identity, "options": options}

    def endpoint_concurrency(self, default: int) -> int:
        """Calls in flight across all replicas: the per-URL limit times the replicas."""
        return (self.concurrency or default) * max(1, len(self.urls()))


class _ModelsFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    models: dict[str, dict[str, Any]] = Field(default_factory=dict)


def load_models_file(path: str | Path) -> dict[str, ModelEntry]:
    """Every entry of a models file by name; errors name the file and the field."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelsFileError(f"{path}: no such models file") from None
    except tomllib.TOMLDecodeError as error:
        raise ModelsFileError(f"{path}: {error}") from None
    try:
        tables = _ModelsFile.model_validate(raw).models
    except ValidationError as error:
        raise ModelsFileError(f"{path}: {_describe(error, ())}") from None
    entries = {}
    for name, table in tables.items():
        try:
            entries[name] = ModelEntry.model_validate({**table, "name": name})
        except ValidationError as error:
            raise ModelsFileError(f"{path}: {_describe(error, ('models', name))}") from None
    return entries


def _describe(error: ValidationError, prefix: tuple[str, ...]) -> str:
    problem = error.errors()[0]
    where = ".".join((*prefix, *(str(part) for part in problem["loc"])))
    return f"{where}: {problem['msg']}"


def resolve_model(ref: str, entries: dict[str, ModelEntry]) -> ModelEntry:
    """`--model REF`: a models-file name, or a `provider/model` spec needing no file."""
    if ref in entries:
        return entries[ref]
    if "/" not in ref:
        known = ", ".join(sorted(entries)) or "no models file given"
        raise SpecError(f"model {ref!r} is neither a models-file name ({known}) nor provider/model")
    return ModelEntry.from_spec(ref)
