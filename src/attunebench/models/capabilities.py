"""What each hosted model accepts, by model, not by a pattern over its name.

A model's `Capabilities` say which request fields it takes (sampling parameters, first-token
logprobs, stop sequences, a seed), how it thinks (OpenAI's hidden reasoning with
`reasoning_effort`; the `thinking` types a Claude request may state and its
`output_config.effort` levels), which field carries its token budget, its output limit where
known, and whether chat completions serve it at all. `source` says where they came from:
Anthropic's models endpoint (`claude_models.describe`, read first) or the tables below, which
hold the models the vendors documented as of 2026-12-03. A model they do not list gets its
vendor's default for unknown models (`unknown_openai`, `UNKNOWN_CLAUDE`: one that may think,
since thinking cannot be ruled out). A models-file entry overrides any field
(`capabilities = { logprobs = false }`), and the pre-flight adapts a request the table got
wrong (`models.preflight`).

A Claude model that accepts `thinking.type = "disabled"` lists it among its thinking types:
every Claude call states its thinking, since what a model does when `thinking` is left out
(the Claude 5 families think) is said by no description and may change.

Names are looked up without a router's prefix (`openai/o3`), a date suffix
(`gpt-5-mini-2025-08-07`, `claude-haiku-4-5-20251001`) or `-latest` where the bare name is
listed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from attunebench.frozen import Frozen, problem_text
from attunebench.models.registry import ProviderConfigError

Thinking = Literal["adaptive", "enabled", "disabled", "between_tools"]
TokenField = Literal["max_tokens", "max_completion_tokens"]
Source = Literal["endpoint", "table"]
_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


class Capabilities(Frozen):
    """What one model accepts; see the module docstring."""

    sampling: bool = Field(default=True, description="temperature and top_p are accepted")
    logprobs: bool = Field(default=True, description="first-token logprobs (choice mode)")
    stop: bool = True
    seed: bool = True
    reasoning: bool = Field(default=False, description="hidden reasoning spends the budget")
    efforts: tuple[str, ...] = Field(default=(), description="accepted effort values")
    thinking: tuple[Thinking, ...] = Field(default=(), description="accepted thinking types")
    thinking_allowance: int = Field(
        default=16_000,
        ge=0,
        description="tokens added to the budget of a call that thinks, at high effort "
        "(the default); other efforts scale it",
    )
    token_field: TokenField | None = Field(
        default=None, description="the budget's field; unset: as the entry's api says"
    )
    chat: bool = Field(default=True, description="served by chat completions (OpenAI)")
    max_output_tokens: int | None = Field(
        default=None, ge=1, description="the largest max_tokens a request may ask; unset: unknown"
    )
    max_input_tokens: int | None = Field(default=None, ge=1, description="the context window")
    lifecycle: str | None = Field(default=None, description="active, deprecated or retired")
    source: Source = Field(default="table", description="the models endpoint, or the table")


_CHAT = Capabilities()
_O_SERIES = Capabilities(
    sampling=False,
    logprobs=False,
    stop=False,
    reasoning=True,
    efforts=("low", "medium", "high"),
    token_field="max_completion_tokens",
)
_GPT5 = _O_SERIES.model_copy(update={"efforts": ("minimal", "low", "medium", "high")})
_GPT51 = _O_SERIES.model_copy(update={"efforts": ("none", "low", "medium", "high")})
_GPT52 = _O_SERIES.model_copy(update={"efforts": ("none", "low", "medium", "high", "xhigh")})
_CHAT_LATEST = Capabilities(logprobs=False, token_field="max_completion_tokens")
_RESPONSES_ONLY = _GPT52.model_copy(update={"chat": False})

OPENAI_MODELS: Mapping[str, Capabilities] = {
    **dict.fromkeys(
        (
            "gpt-3.5-turbo",
            "gpt-4",
            "gpt-4-turbo",
            "gpt-4o",
            "gpt-4o-mini",
            "chatgpt-4o-latest",
            "gpt-4.1",
            "gpt-4.1-mini",
            "gpt-4.1-nano",
        ),
        _CHAT,
    ),
    **dict.fromkeys(("o1", "o3", "o3-mini", "o4-mini"), _O_SERIES),
    **dict.fromkeys(("gpt-5", "gpt-5-mini", "gpt-5-nano"), _GPT5),
    "gpt-5.1": _GPT51,
    **dict.fromkeys(("gpt-5.2", "gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.5"), _GPT52),
    **dict.fromkeys(("gpt-5-chat", "gpt-5.1-chat", "gpt-5.2-chat", "gpt-5.3-chat"), _CHAT_LATEST),
    **dict.fromkeys(
        ("o1-pro", "o3-pro", "gpt-5-pro", "gpt-5.2-pro", "gpt-5.4-pro", "gpt-5.5-pro"),
        _RESPONSES_ONLY,
    ),
}

# Every Claude model takes `thinking.type = "disabled"` but those that think always ("adaptive,
# always on": Opus 5.5, Fable 5.1 and later); one that does not think at all takes it too.
_CLAUDE_3 = Capabilities(logprobs=False, seed=False, thinking=("disabled",))
_CLAUDE_BUDGET = _CLAUDE_3.model_copy(update={"thinking": ("enabled", "disabled")})
_CLAUDE_46 = _CLAUDE_3.model_copy(
    update={
        "thinking": ("adaptive", "enabled", "disabled"),
        "efforts": ("low", "medium", "high", "max"),
    }
)
# Claude 4.7 and later: adaptive thinking only, and no sampling parameters. The Claude 5
# families think when `thinking` is left out; stating "disabled" turns it off.
_CLAUDE_ADAPTIVE = _CLAUDE_3.model_copy(
    update={
        "sampling": False,
        "thinking": ("adaptive", "disabled"),
        "efforts": ("low", "medium", "high", "xhigh", "max"),
    }
)
# "Adaptive (always on)": thinking cannot be turned off. A Claude the table does not list may
# be one of these, so it is asked for adaptive thinking with an allowance for it.
UNKNOWN_CLAUDE = _CLAUDE_ADAPTIVE.model_copy(update={"thinking": ("adaptive",)})
_ALWAYS_THINKS = UNKNOWN_CLAUDE

CLAUDE_MODELS: Mapping[str, Capabilities] = {
    **dict.fromkeys(
        ("claude-3-haiku", "claude-3-opus", "claude-3-5-haiku", "claude-3-5-sonnet"), _CLAUDE_3
    ),
    **dict.fromkeys(
        (
            "claude-3-7-sonnet",
            "claude-sonnet-4",
            "claude-opus-4",
            "claude-opus-4-1",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "claude-opus-4-5",
        ),
        _CLAUDE_BUDGET,
    ),
    **dict.fromkeys(("claude-opus-4-6", "claude-sonnet-4-6"), _CLAUDE_46),
    **dict.fromkeys(
        (
            "claude-opus-4-7",
            "claude-opus-4-8",
            "claude-sonnet-5",
            "claude-opus-5",
            "claude-fable-5",
            "claude-mythos-5",
            "claude-haiku-5-5",
            "claude-sonnet-5-5",
        ),
        _CLAUDE_ADAPTIVE,
    ),
    **dict.fromkeys(
        (
            "claude-opus-5-5",
            "claude-fable-5-1",
            "claude-fable-5-2",
            "claude-mythos-5-1",
            "claude-mythos-5-2",
        ),
        _ALWAYS_THINKS,
    ),
}


def family(model: str) -> str:
    """A model name as the tables list it.

    >>> [family(m) for m in ("openai/o3", "gpt-5-mini-2025-08-07", "gpt-5-chat-latest")]
    ['o3', 'gpt-5-mini', 'gpt-5-chat']
    """
    name = _DATE.sub("", model.rsplit("/", 1)[-1].lower())
    return name.removesuffix("-latest") if name.endswith("-chat-latest") else name


def unknown_openai(hosted: bool) -> Capabilities:
    """A model the table does not list: on OpenAI's API, assume its newest rules (reasoning,
    no sampling, no logprobs); on any other server (vLLM, llama.cpp), that it takes
    everything, as those servers do. The pre-flight adapts either guess."""
    return _GPT52.model_copy(update={"efforts": ()}) if hosted else _CHAT


def capabilities_of(
    model: str, table: Mapping[str, Capabilities], default: Capabilities, override: Any = None
) -> Capabilities:
    """The table's entry for `model` (or `default`), with a models-file `override` on top."""
    return overridden(model, table.get(family(model), default), override)


def overridden(model: str, base: Capabilities, override: Any) -> Capabilities:
    """`base` with a models-file entry's `capabilities` (and `sampling`) over it."""
    if not override:
        return base
    try:
        return Capabilities.model_validate({**base.model_dump(), **dict(override)})
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(part) for part in problem["loc"])
        raise ProviderConfigError(
            f"{model}: capabilities.{where}: {problem_text(problem)}"
        ) from None
