"""A local model's models-file entry, made once: for examples/models.toml (a test holds the
file to it), `make demo-llm`, the ladder, and a llama-server started by hand (the end-to-end
tests, the Qwen benchmark). Greedy and seeded; `max_tokens` bounds an answer written, not chosen."""

from __future__ import annotations

from typing import Any, Literal

from attunebench.models.base import GenerateParams
from attunebench.models.local_models import LocalModel
from attunebench.models.modelsfile import ModelEntry

MAX_TOKENS = 128  # examples/models.toml's budget: a task's JSON answer fits


def local_entry(
    model: LocalModel,
    *,
    name: str | None = None,
    answer: Literal["generate", "choice"] = "choice",
    max_tokens: int = MAX_TOKENS,
    json_schema: bool = False,
    base_url: str | None = None,
    **options: Any,
) -> ModelEntry:
    """`local/NAME` (the run starts and stops its server), named `name` (default: the model's
    name), with the provider's `options`. With `base_url`: `openai/NAME` at a server started by
    hand, one call at a time, its identity the weights (never the port), chat as its template
    allows and calls of up to 5 minutes (two busy cores) unless `options` say otherwise."""
    served = base_url is not None
    defaults = {"chat": model.chat, "json_mode": False, "timeout_s": 300.0}
    return ModelEntry(
        name=name or model.name,
        spec=f"{'openai' if served else 'local'}/{model.name}",
        base_url=base_url,
        identity=model.identity if served else None,
        concurrency=1 if served else None,
        answer=answer,
        json_schema=json_schema,
        params=GenerateParams(temperature=0.0, max_tokens=max_tokens, seed=0),
        options={**defaults, **options} if served else options,
    )
