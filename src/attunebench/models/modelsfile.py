"""The models file (TOML): many models by name, with parameters, servers, keys and prices, one
`[models.NAME]` table each, as examples/models.toml (its keys and more entries:
docs/running-models.md, docs/frontier.md, docs/scale.md).

`--model NAME` picks an entry; `--model provider/model` needs no file. A model's cache identity
is its spec, `identity`, `sampling`, `capabilities`, `json_schema` and the options that can
change its output; never its URLs, key, concurrency, rate limit, timeouts, `api` or `batch` (a
batch answer is the one a live call gets).
"""

from __future__ import annotations

import inspect
import re
import tomllib
import typing
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs

import tomli_w
from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from attunebench.frozen import Frozen, first_problem
from attunebench.models.base import GenerateParams
from attunebench.models.registry import PROVIDERS, SpecError, parse_spec, spec_kind

# Provider options that change how a call travels, not what comes back.
TRANSPORT_OPTIONS = frozenset(
    {
        "timeout_s",
        "max_connections",
        "batch_size",
        "batch_tokens",
        "batch_poll_s",
        "batch_quiet_s",
        "batch_wait_s",
        "threads",  # a local/ model's server: how fast it answers, not what
        "ctx_size",
    }
)
# A local/ model's own GGUF file: where it is and the digest that pins it. The provider's
# identity is the weights' digest, so a file moved or renamed keeps its cached answers.
WEIGHTS_OPTIONS = frozenset({"file", "sha256"})
# Which providers take each of the settings that are passed on to the provider.
SETTING_PROVIDERS = {
    "api": frozenset({"openai"}),
    "sampling": frozenset({"openai", "anthropic"}),
    "capabilities": frozenset({"openai", "anthropic"}),
    "batch": frozenset({"openai", "anthropic"}),
    "json_schema": frozenset({"openai", "local"}),
}
# Providers told the entry's answer mode when they are made: a local base model refuses
# generate mode then, before anything runs.
ANSWER_PROVIDERS = frozenset({"local"})
# Requests a batch model keeps waiting at once: a batch takes its requests by the thousand.
BATCH_IN_FLIGHT = 100_000


class ModelsFileError(ValueError):
    """The models file cannot be read; the message names the file and the field."""


class Price(Frozen):
    """What a model's tokens cost, in USD per million. Reasoning tokens are output tokens unless
    `reasoning` prices them apart; cache reads cost `cached_input` (unset: the input price), cache
    writes `cache_write` (unset: 1.25 times the input price, as Anthropic and OpenAI bill them) or
    `cache_write_1h` (unset: twice it); a batch call pays `batch` times the price."""

    input: float = Field(default=0.0, ge=0, description="USD per million input tokens")
    cached_input: float | None = Field(
        default=None, ge=0, description="USD per million cached input tokens; unset: input"
    )
    cache_write: float | None = Field(
        default=None, ge=0, description="USD per million tokens written to the prompt cache"
    )
    cache_write_1h: float | None = Field(
        default=None, ge=0, description="USD per million tokens written for an hour (Anthropic)"
    )
    output: float = Field(default=0.0, ge=0, description="USD per million output tokens")
    reasoning: float | None = Field(
        default=None, ge=0, description="USD per million reasoning tokens; unset: the output price"
    )
    batch: float = Field(
        default=0.5, ge=0, le=1, description="The share of the price a batch call pays"
    )

    def cost(
        self,
        input_tokens: int,
        output_tokens: int,
        reasoning_tokens: int = 0,
        *,
        batched: bool = False,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
        cache_write_1h_tokens: int = 0,
    ) -> float:
        """USD for one call; each token count includes the ones named after it.

        >>> Price(input=1.0, output=10.0, reasoning=5.0).cost(1_000_000, 300_000, 200_000)
        3.0
        >>> Price(input=1.0, output=10.0).cost(1_000_000, 0, batched=True)
        0.5
        >>> Price(input=1.0, cached_input=0.1).cost(1_000_000, 0, cached_input_tokens=500_000)
        0.55
        >>> Price(input=2.0).cost(1_000_000, 0, cache_write_tokens=1_000_000)
        2.5
        """
        reasoning = min(reasoning_tokens, output_tokens)
        cached = min(cached_input_tokens, input_tokens)
        written = min(cache_write_tokens, input_tokens - cached)
        hour = min(cache_write_1h_tokens, written)
        reasoning_price = self.output if self.reasoning is None else self.reasoning
        cached_price = self.input if self.cached_input is None else self.cached_input
        write_price = 1.25 * self.input if self.cache_write is None else self.cache_write
        hour_price = 2.0 * self.input if self.cache_write_1h is None else self.cache_write_1h
        usd = (
            (input_tokens - cached - written) * self.input
            + cached * cached_price
            + (written - hour) * write_price
            + hour * hour_price
            + (output_tokens - reasoning) * self.output
            + reasoning * reasoning_price
        ) / 1_000_000
        return usd * self.batch if batched else usd


class ModelEntry(Frozen):
    """One model as the engine runs it: how to make its provider, and how to pace and price it."""

    name: str = Field(min_length=1, description="What records and reports call this model.")
    spec: str
    params: GenerateParams = Field(default_factory=GenerateParams)
    base_url: str | None = None
    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    identity: str | None = None
    family: str | None = Field(
        default=None,
        min_length=1,
        description="The model's family (its maker's line); a judge is audited for favouring it.",
    )
    concurrency: int | None = Field(default=None, ge=1)
    rate_limit: float | None = Field(default=None, gt=0, description="requests per second")
    price: Price = Field(default_factory=Price)
    options: dict[str, Any] = Field(default_factory=dict)
    answer: Literal["generate", "choice"] = Field(
        default="generate",
        description="How choice questions are answered: generated text, or option probabilities.",
    )
    api: Literal["openai", "compatible"] | None = Field(
        default=None,
        description="openai/: whose rules the server follows (openai: max_completion_tokens); "
        "unset: openai for api.openai.com, compatible for any other server.",
    )
    sampling: bool | None = Field(
        default=None,
        description="Whether temperature and top_p are sent; unset: not to a reasoning model.",
    )
    batch: bool = Field(default=False, description="Send calls through the provider's batch API.")
    json_schema: bool = Field(
        default=False,
        description="Send each task's answer schema (constrained decoding); recorded in run.json.",
    )
    capabilities: dict[str, Any] | None = Field(
        default=None,
        description="What the model accepts, over its capability table's entry "
        "(models.capabilities): sampling, logprobs, stop, seed, efforts, thinking, ...",
    )

    @field_validator("spec")
    @classmethod
    def _is_a_spec(cls, spec: str) -> str:
        parse_spec(spec)  # raises SpecError, a ValueError, which pydantic reports with the field
        return spec

    @model_validator(mode="after")
    def _settings_fit_the_provider(self) -> ModelEntry:
        prefix = parse_spec(self.spec)[0]
        for setting, providers in SETTING_PROVIDERS.items():
            if getattr(self, setting) not in (None, False) and prefix not in providers:
                takers = " and ".join(f"{p}/" for p in sorted(providers))
                raise ValueError(f"{setting} is a setting of {takers} models, not {prefix}/")
        if self.batch and self.answer == "choice":
            raise ValueError("batch = true answers by generation; choice mode calls live")
        return self

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
        for setting in ("api", "sampling", "capabilities"):
            if getattr(self, setting) is not None:
                options[setting] = getattr(self, setting)
        for setting in ("batch", "json_schema"):
            if getattr(self, setting):
                options[setting] = True
        if parse_spec(self.spec)[0] in ANSWER_PROVIDERS:
            options["answer"] = self.answer
        return options

    def cache_identity(self) -> dict[str, Any]:
        """What, besides the spec, decides this model's outputs (enters every cache key)."""
        left_out = TRANSPORT_OPTIONS | WEIGHTS_OPTIONS
        options = {k: v for k, v in self.options.items() if k not in left_out}
        identity: dict[str, Any] = {"spec": self.spec, "identity": self.identity}
        identity["options"] = options
        if self.sampling is not None:  # leaving temperature out can change a model's answers
            identity["sampling"] = self.sampling
        if self.capabilities:  # so can leaving out anything else it says
            identity["capabilities"] = self.capabilities
        if self.json_schema:  # a constrained answer is not the one a free call gets
            identity["json_schema"] = True
        return identity

    def endpoint_concurrency(self, default: int) -> int:
        """Calls in flight across all replicas (a batch model's wait in batches: all of them)."""
        if self.batch:
            return self.concurrency or BATCH_IN_FLIGHT
        return (self.concurrency or default) * max(1, len(self.urls()))


class _ModelsFile(Frozen):
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)


def load_models_file(path: str | Path) -> dict[str, ModelEntry]:
    """Every entry of a models file by name; errors name the file and the field."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelsFileError(f"{path}: no such models file") from None
    except tomllib.TOMLDecodeError as error:
        raise ModelsFileError(
            f"{path}: not valid TOML ({error}); a models file is TOML, one [models.NAME] "
            "table per model, as examples/models.toml"
        ) from None
    try:
        tables = _ModelsFile.model_validate(raw).models
    except ValidationError as error:
        raise ModelsFileError(f"{path}: {_describe(error, ())}") from None
    entries = {}
    for name, table in tables.items():
        try:
            entries[name] = ModelEntry.model_validate(
                {**_located(table, path.parent), "name": name}
            )
        except ValidationError as error:
            raise ModelsFileError(f"{path}: {_describe(error, ('models', name))}") from None
    return entries


def models_file_text(entries: Iterable[ModelEntry]) -> str:
    """A models file naming `entries` by their settings that differ from the defaults."""
    tables = {
        e.name: e.model_dump(mode="json", exclude={"name"}, exclude_defaults=True) for e in entries
    }
    return tomli_w.dumps({"models": tables})


def _located(table: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A local/ entry's relative `file` read from the models file's folder (and `~` expanded)."""
    options = table.get("options")
    if not isinstance(options, dict) or not isinstance(options.get("file"), str):
        return table
    file = Path(options["file"]).expanduser()
    return {**table, "options": {**options, "file": str(folder / file)}}


def _describe(error: ValidationError, prefix: tuple[str, ...]) -> str:
    where, problem = first_problem(error)
    return f"{'.'.join(part for part in (*prefix, where) if part)}: {problem}"


def option_error(entry: ModelEntry, error: TypeError) -> ModelsFileError:
    """A provider refusing an `options` key, worded like a misspelt top-level key; any other
    TypeError is a bug, raised as is."""
    found = re.search(r"unexpected keyword argument '(\w+)'", str(error))
    if found is None:
        raise error
    prefix = parse_spec(entry.spec)[0]
    known = ", ".join(_option_names(prefix)) or "none"
    return ModelsFileError(
        f"models.{entry.name}.options.{found.group(1)}: not an option of {prefix}/ models "
        f"(options: {known})"
    )


def _option_names(prefix: str) -> list[str]:
    """The keyword options the provider a factory makes takes (from its signature)."""
    try:
        factory = PROVIDERS.get(prefix)
        made = (
            factory if isinstance(factory, type) else typing.get_type_hints(factory).get("return")
        )
        parameters = inspect.signature(made).parameters.values() if made else ()
        bundled = _bundled(made) if made else []
    except (NameError, TypeError, ValueError):  # not introspectable: say nothing rather than guess
        return []
    skipped = {"self", "model", "name", "spec"}
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sorted(
        [p.name for p in parameters if p.kind in kinds and p.name not in skipped] + bundled
    )


def _bundled(made: Any) -> list[str]:
    """The options a provider takes as `**options: Unpack[SomeTypedDict]`."""
    for hint in typing.get_type_hints(made.__init__).values():
        if typing.get_origin(hint) is typing.Unpack and typing.is_typeddict(
            typing.get_args(hint)[0]
        ):
            return list(typing.get_type_hints(typing.get_args(hint)[0]))
    return []


def short_names(entries: Sequence[ModelEntry]) -> tuple[ModelEntry, ...]:
    """Entries named by their spec, with a fitted baseline's options left out of the name
    (`baseline/majority?train=x.jsonl` is `baseline/majority` in tables and plots); two that
    would share a name are told apart by their train file's stem. Models-file names stay."""
    first = [_short(entry) for entry in entries]
    taken = Counter(first)
    named = [
        name if taken[name] == 1 or name == entry.name else f"{name}-{_train_stem(entry.spec)}"
        for entry, name in zip(entries, first, strict=True)
    ]
    taken = Counter(named)
    return tuple(
        entry.model_copy(update={"name": name if taken[name] == 1 else entry.spec})
        for entry, name in zip(entries, named, strict=True)
    )


def _short(entry: ModelEntry) -> str:
    shortened = entry.name == entry.spec and spec_kind(entry.spec) == "baseline"
    return entry.spec.partition("?")[0] if shortened else entry.name


def _train_stem(spec: str) -> str:
    train = parse_qs(spec.partition("?")[2]).get("train", [""])[0]
    return Path(train).stem or "options"


def resolve_model(ref: str, entries: dict[str, ModelEntry]) -> ModelEntry:
    """`--model REF`: a models-file name, or a `provider/model` spec needing no file."""
    if ref in entries:
        return entries[ref]
    if "/" not in ref:
        known = ", ".join(sorted(entries)) or "no models file given"
        raise SpecError(f"model {ref!r} is neither a models-file name ({known}) nor provider/model")
    return ModelEntry.from_spec(ref)
