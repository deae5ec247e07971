"""What each hosted model accepts, by model, not by a pattern over its name.

`Capabilities` say which request fields a model takes, how it thinks, its budget's field and
output limit. They come from Anthropic's models endpoint (`claude_models.describe`) or the
tables below, each entry citing the pages it was read from (`Citation`); a model the
tables lack gets its vendor's default for unknown models. A models-file entry overrides any
field, and the pre-flight adapts a request the table got wrong (`models.preflight`). Names are
looked up without a router's prefix, a date suffix or `-latest`."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from pydantic import Field, ValidationError

from attunebench.frozen import Frozen, first_problem
from attunebench.models.registry import ProviderConfigError

Thinking = Literal["adaptive", "enabled", "disabled", "between_tools"]
TokenField = Literal["max_tokens", "max_completion_tokens"]
Source = Literal["endpoint", "table"]
T = TypeVar("T")  # what a table holds of a model
_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
READ_ON: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
# An address, or an SDK's file named by its package, version and path.
PAGE: Final = re.compile(r"(https?://|[a-z][\w.-]*\.[a-z]{2,}/)\S+|[\w-]+ SDK [\d.]+ \S+\.py")


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a per-model fact was read: a page (or an SDK file) and the day, `YYYY-MM-DD`.
    Every entry of the tables and of the stand-ins' rules names its sources, and a test refuses
    a fact with none (`tests/models/test_documented.py`)."""

    page: str
    read: str

    def problem(self) -> str | None:
        """What makes this no citation (no page, no date), or None."""
        if not PAGE.fullmatch(self.page):
            return f"{self.page!r} is not a page or an SDK file"
        if not READ_ON.fullmatch(self.read):
            return f"{self.read!r} is not a date read (YYYY-MM-DD)"
        return None


class Capabilities(Frozen):
    """What one model accepts; see the module docstring."""

    sampling: bool = Field(default=True, description="temperature and top_p are accepted")
    logprobs: bool = Field(default=True, description="first-token logprobs (choice mode)")
    stop: bool = True
    seed: bool = True
    reasoning: bool = Field(default=False, description="hidden reasoning spends the budget")
    efforts: tuple[str, ...] = Field(default=(), description="accepted effort values")
    default_effort: str | None = Field(
        default=None, description="the effort the API applies when none is sent"
    )
    plain_efforts: tuple[str, ...] = Field(
        default=(), description="efforts that do not reason: sampling and logprobs are taken"
    )
    thinking_off_max_effort: str | None = Field(
        default=None,
        description="the highest effort at which thinking may be turned off (disabled or "
        "between_tools); unset: any",
    )
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


# Where the tables' facts were read; each entry names its own below.
_ANTHROPIC = "https://platform.claude.com/docs/en"
OVERVIEW = Citation(f"{_ANTHROPIC}/about-claude/models/overview", "2026-12-03")
EXTENDED = Citation(f"{_ANTHROPIC}/build-with-claude/extended-thinking", "2026-12-03")
ADAPTIVE_PAGE = Citation(f"{_ANTHROPIC}/build-with-claude/adaptive-thinking", "2026-12-03")
EFFORT_PAGE = Citation(f"{_ANTHROPIC}/build-with-claude/effort", "2026-12-05")
RETIRED_PAGE = Citation(f"{_ANTHROPIC}/about-claude/model-deprecations", "2026-12-05")
OPUS_5_PAGE = Citation(
    "https://platform.claude.com/docs/zh-CN/models/opus-5/overview", "2026-12-05"
)
SKILLS_MODELS = Citation(
    "https://github.com/anthropics/skills/blob/main/skills/claude-api/shared/models.md",
    "2026-12-05",
)
SONNET_55_PAGE = Citation(f"{_ANTHROPIC}/models/sonnet-5-5/migration-guide", "2026-12-05")
FABLE_5_PAGE = Citation(f"{_ANTHROPIC}/models/fable-5/migration-guide", "2026-12-05")
THINKING_TYPES_SDK = Citation("anthropic SDK 2.17.0 types/thinking_types.py", "2026-12-05")
OPENAI_MODELS_PAGE = Citation("https://platform.openai.com/docs/models", "2026-12-03")
REASONING_PAGE = Citation("https://platform.openai.com/docs/guides/reasoning", "2026-12-03")
CHAT_MODEL_SDK = Citation("openai SDK 3.3.1 types/shared/chat_model.py", "2026-12-05")
EFFORT_SDK = Citation("openai SDK 3.3.1 types/shared/reasoning_effort.py", "2026-12-05")
CREATE_PARAMS_SDK = Citation(
    "openai SDK 3.3.1 types/chat/completion_create_params.py", "2026-12-05"
)


def tables(
    *groups: tuple[tuple[str, ...], T, tuple[Citation, ...]],
) -> tuple[dict[str, T], dict[str, tuple[Citation, ...]]]:
    """A table of facts by model and one of their sources, from models that share both."""
    models = {name: caps for names, caps, _ in groups for name in names}
    sources = {name: cited for names, _, cited in groups for name in names}
    return models, sources


_CHAT = Capabilities()
_O_SERIES = Capabilities(
    sampling=False,
    logprobs=False,
    stop=False,
    reasoning=True,
    efforts=("low", "medium", "high"),
    default_effort="medium",
    token_field="max_completion_tokens",
)
_GPT5 = _O_SERIES.model_copy(update={"efforts": ("minimal", "low", "medium", "high")})
# GPT-5.1 and later default to effort `none`, which does not reason: then the model takes
# sampling and gives logprobs, as a chat model does (`at_effort`).
_GPT51 = _O_SERIES.model_copy(
    update={
        "efforts": ("none", "low", "medium", "high"),
        "default_effort": "none",
        "plain_efforts": ("none",),
    }
)
_GPT52 = _GPT51.model_copy(update={"efforts": ("none", "low", "medium", "high", "xhigh")})
_GPT56 = _GPT51.model_copy(update={"efforts": ("none", "low", "medium", "high", "xhigh", "max")})
_CHAT_LATEST = Capabilities(logprobs=False, token_field="max_completion_tokens")
# The -pro models: the Responses API only, at effort medium or above (high by default).
_RESPONSES_ONLY = _GPT52.model_copy(
    update={
        "chat": False,
        "plain_efforts": (),
        "efforts": ("medium", "high", "xhigh"),
        "default_effort": "high",
    }
)

_CHAT_NAMES = (
    "gpt-3.5-turbo",
    "gpt-4",
    "gpt-4-turbo",
    "gpt-4o",
    "gpt-4o-mini",
    "chatgpt-4o-latest",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
)
_GPT52_NAMES = ("gpt-5.2", "gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.5")
_GPT56_NAMES = ("gpt-5.6", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna")
_CHAT_LATEST_NAMES = ("gpt-5-chat", "gpt-5.1-chat", "gpt-5.2-chat", "gpt-5.3-chat")
_PRO_NAMES = ("o1-pro", "o3-pro", "gpt-5-pro", "gpt-5.2-pro", "gpt-5.4-pro", "gpt-5.5-pro")
_OPENAI_PAGES = (OPENAI_MODELS_PAGE, REASONING_PAGE)
_REASONING_SOURCES = (*_OPENAI_PAGES, CREATE_PARAMS_SDK)
OPENAI_MODELS, OPENAI_SOURCES = tables(
    (_CHAT_NAMES, _CHAT, (OPENAI_MODELS_PAGE, CHAT_MODEL_SDK)),
    (("o1", "o3", "o3-mini", "o4-mini"), _O_SERIES, _REASONING_SOURCES),
    (("gpt-5", "gpt-5-mini", "gpt-5-nano"), _GPT5, _REASONING_SOURCES),
    (("gpt-5.1",), _GPT51, _REASONING_SOURCES),
    (_GPT52_NAMES, _GPT52, (*_OPENAI_PAGES, CHAT_MODEL_SDK)),
    (_GPT56_NAMES, _GPT56, (CHAT_MODEL_SDK, EFFORT_SDK)),
    (_CHAT_LATEST_NAMES, _CHAT_LATEST, (OPENAI_MODELS_PAGE, CHAT_MODEL_SDK)),
    (_PRO_NAMES, _RESPONSES_ONLY, _OPENAI_PAGES),
)

# Claude: the thinking types a request may state, as each model's pages say. A model that does
# not think at all takes `disabled` (THINKING_TYPES_SDK: "True on a model that does not
# support thinking"); one that always thinks takes neither `disabled` nor `between_tools`.
_CLAUDE_3 = Capabilities(logprobs=False, seed=False, thinking=("disabled",), max_output_tokens=4096)
_CLAUDE_BUDGET = _CLAUDE_3.model_copy(
    update={"thinking": ("enabled", "disabled"), "max_output_tokens": 64_000}
)
_CLAUDE_46 = _CLAUDE_BUDGET.model_copy(
    update={
        "thinking": ("adaptive", "enabled", "disabled"),
        "efforts": ("low", "medium", "high", "max"),
        "default_effort": "high",
        "max_output_tokens": 128_000,
    }
)
# Claude 4.7 and later: adaptive thinking only, and no sampling parameters. The Claude 5
# families think when `thinking` is left out; stating "disabled" turns it off.
_CLAUDE_ADAPTIVE = _CLAUDE_46.model_copy(
    update={
        "sampling": False,
        "thinking": ("adaptive", "disabled"),
        "efforts": ("low", "medium", "high", "xhigh", "max"),
    }
)
# Thinking off only at effort high or lower ("pairing it with xhigh/max returns a 400").
_OFF_UP_TO_HIGH = _CLAUDE_ADAPTIVE.model_copy(update={"thinking_off_max_effort": "high"})
# "Adaptive (always on)": thinking cannot be turned off. A Claude the table does not list may
# be one of these, so it is asked for adaptive thinking with an allowance for it.
UNKNOWN_CLAUDE = _CLAUDE_ADAPTIVE.model_copy(
    update={"thinking": ("adaptive",), "max_output_tokens": None}
)
_ALWAYS_THINKS = _CLAUDE_ADAPTIVE.model_copy(update={"thinking": ("adaptive",)})
_RETIRED = {"lifecycle": "retired"}

_THINKING_PAGES = (OVERVIEW, EXTENDED)
_ADAPTIVE_PAGES = (OVERVIEW, ADAPTIVE_PAGE, EFFORT_PAGE)
_FABLE_PAGES = (OVERVIEW, FABLE_5_PAGE, EFFORT_PAGE)
_64K = {"max_output_tokens": 64_000}
CLAUDE_MODELS, CLAUDE_SOURCES = tables(
    (("claude-3-haiku",), _CLAUDE_3, (OVERVIEW,)),
    (("claude-3-opus",), _CLAUDE_3.model_copy(update=_RETIRED), (OVERVIEW, RETIRED_PAGE)),
    (
        ("claude-3-5-haiku", "claude-3-5-sonnet"),
        _CLAUDE_3.model_copy(update={"max_output_tokens": 8192, **_RETIRED}),
        (OVERVIEW, RETIRED_PAGE),
    ),
    (
        ("claude-3-7-sonnet",),
        _CLAUDE_BUDGET.model_copy(update=_RETIRED),
        (*_THINKING_PAGES, RETIRED_PAGE),
    ),
    (("claude-sonnet-4", "claude-sonnet-4-5", "claude-haiku-4-5"), _CLAUDE_BUDGET, _THINKING_PAGES),
    (
        ("claude-opus-4", "claude-opus-4-1"),
        _CLAUDE_BUDGET.model_copy(update={"max_output_tokens": 32_000}),
        _THINKING_PAGES,
    ),
    (
        ("claude-opus-4-5",),
        _CLAUDE_BUDGET.model_copy(
            update={"efforts": ("low", "medium", "high"), "default_effort": "high"}
        ),
        (*_THINKING_PAGES, EFFORT_PAGE),
    ),
    (
        ("claude-opus-4-6", "claude-sonnet-4-6"),
        _CLAUDE_46,
        (*_THINKING_PAGES, ADAPTIVE_PAGE, EFFORT_PAGE),
    ),
    (("claude-opus-4-7", "claude-opus-4-8", "claude-sonnet-5"), _CLAUDE_ADAPTIVE, _ADAPTIVE_PAGES),
    (("claude-opus-5",), _OFF_UP_TO_HIGH, (OVERVIEW, OPUS_5_PAGE, SKILLS_MODELS, EFFORT_PAGE)),
    (
        ("claude-haiku-5-5",),
        _OFF_UP_TO_HIGH.model_copy(update={"default_effort": "medium"}),
        (OVERVIEW, THINKING_TYPES_SDK, EFFORT_PAGE),
    ),
    # Sonnet 5.5 turns up-front thinking off with `between_tools`; `disabled` is refused.
    (
        ("claude-sonnet-5-5",),
        _CLAUDE_ADAPTIVE.model_copy(update={"thinking": ("adaptive", "between_tools")}),
        (OVERVIEW, SONNET_55_PAGE, EFFORT_PAGE),
    ),
    (("claude-fable-5",), _ALWAYS_THINKS.model_copy(update=_64K), _FABLE_PAGES),
    (("claude-mythos-5",), _ALWAYS_THINKS, _FABLE_PAGES),
    (
        ("claude-opus-5-5",),
        _ALWAYS_THINKS.model_copy(update={"default_effort": "medium"}),
        _ADAPTIVE_PAGES,
    ),
    (("claude-fable-5-1",), _ALWAYS_THINKS.model_copy(update=_64K), (OVERVIEW, ADAPTIVE_PAGE)),
    (
        ("claude-fable-5-2", "claude-mythos-5-1", "claude-mythos-5-2"),
        _ALWAYS_THINKS,
        (OVERVIEW, ADAPTIVE_PAGE),
    ),
)


def at_effort(caps: Capabilities, effort: str | None, told: Collection[str] = ()) -> Capabilities:
    """What a call at `effort` (unset: the model's default) may send: at an effort that does
    not reason (GPT-5.1 and later at `none`) sampling and logprobs too, unless the models
    file said otherwise (`told`: the fields it set)."""
    if (effort or caps.default_effort) not in caps.plain_efforts:
        return caps
    plain = {name: True for name in ("sampling", "logprobs") if name not in told}
    return caps.model_copy(update=plain)


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
    guess = {"efforts": (), "default_effort": None, "plain_efforts": ()}
    return _GPT52.model_copy(update=guess) if hosted else _CHAT


def overridden(model: str, base: Capabilities, override: Any) -> Capabilities:
    """`base` with a models-file entry's `capabilities` (and `sampling`) over it."""
    if not override:
        return base
    try:
        return Capabilities.model_validate({**base.model_dump(), **dict(override)})
    except ValidationError as error:
        where, problem = first_problem(error)
        raise ProviderConfigError(f"{model}: capabilities.{where}: {problem}") from None
