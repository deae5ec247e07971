"""A local model's models-file entry, made in one place: the four of examples/models.toml
(`tests/models/test_local.py` holds the shipped file to them), those `make demo-llm` writes
and the ladder runs, and those naming a llama-server started by hand (the end-to-end tests,
the Qwen benchmark).

Every one is greedy and seeded (temperature 0, seed 0); `max_tokens` is the budget of an
answer written rather than chosen.
"""

from __future__ import annotations

from typing import Any, Literal

from attunebench.models.base import GenerateParams
from attunebench.models.local_models import LocalModel
from attunebench.models.modelsfile import ModelEntry

MAX_TOKENS = 128  # examples/models.toml's budget: a task's JSON answer fits
SERVED_TIMEOUT_S = 300.0  # a call to a server on two busy cores may take minutes


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
    """`local/NAME` (the run starts and stops the model's own server), named `name` (default:
    the model's name), with the provider's `options` (threads, ctx_size, ...).

    With `base_url`, the model as a llama-server started by hand serves it: `openai/NAME` at
    that URL, one call at a time, its identity the verified weights (never the port), asked
    through /chat/completions if it has a chat template and with plain text if not (`chat`
    and `json_mode` among `options` say otherwise)."""
    served = base_url is not None
    defaults = {"chat": model.chat, "json_mode": False, "timeout_s": SERVED_TIMEOUT_S}
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
