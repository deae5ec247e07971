"""The providers' capability table and the stand-ins' rules, each checked against what the
vendors document, never against each other: a mistake both make (the Claude 5 families
thinking when `thinking` is left out, unmarked in both) would pass a test that compares them.

The facts below are written from OpenAI's model and reasoning guides and Anthropic's models
overview, thinking guides and models API as documented on 2026-12-03.
"""

from __future__ import annotations

import pytest

from attunebench.models import GenerateParams
from attunebench.models.capabilities import CLAUDE_MODELS, OPENAI_MODELS, family
from attunebench.models.claude_models import thinking_fields
from attunebench.testing import anthropic_rules, openai_rules

FIVE = ("low", "medium", "high", "xhigh", "max")
BUDGET = frozenset({"enabled", "disabled"})
ADAPTIVE = frozenset({"adaptive", "disabled"})
# model: (the thinking types a request may state, effort levels, thinks when `thinking` is
# left out, takes temperature and top_p)
CLAUDE: dict[str, tuple[frozenset[str], tuple[str, ...], bool, bool]] = {
    "claude-3-5-haiku": (frozenset({"disabled"}), (), False, True),
    "claude-3-7-sonnet": (BUDGET, (), False, True),
    "claude-sonnet-4": (BUDGET, (), False, True),
    "claude-sonnet-4-5": (BUDGET, (), False, True),
    "claude-haiku-4-5": (BUDGET, (), False, True),
    "claude-opus-4-5": (BUDGET, (), False, True),
    "claude-sonnet-4-6": (BUDGET | {"adaptive"}, ("low", "medium", "high", "max"), False, True),
    "claude-opus-4-6": (BUDGET | {"adaptive"}, ("low", "medium", "high", "max"), False, True),
    "claude-opus-4-7": (ADAPTIVE, FIVE, False, False),
    "claude-opus-4-8": (ADAPTIVE, FIVE, False, False),
    # The Claude 5 families think unless told not to ...
    "claude-opus-5": (ADAPTIVE, FIVE, True, False),
    "claude-sonnet-5": (ADAPTIVE, FIVE, True, False),
    "claude-sonnet-5-5": (ADAPTIVE, FIVE, True, False),
    "claude-haiku-5-5": (ADAPTIVE, FIVE, True, False),
    "claude-fable-5": (ADAPTIVE, FIVE, True, False),
    "claude-mythos-5": (ADAPTIVE, FIVE, True, False),
    # ... and these cannot be told: "adaptive, always on".
    "claude-opus-5-5": (frozenset({"adaptive"}), FIVE, True, False),
    "claude-fable-5-1": (frozenset({"adaptive"}), FIVE, True, False),
}
O_SERIES = (True, ("low", "medium", "high"), False)
GPT5 = (True, ("minimal", "low", "medium", "high"), False)
GPT52 = (True, ("none", "low", "medium", "high", "xhigh"), False)
CHAT = (False, (), True)
# model: (reasons, reasoning_effort values, gives first-token logprobs)
OPENAI: dict[str, tuple[bool, tuple[str, ...], bool]] = {
    **dict.fromkeys(("gpt-3.5-turbo", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini"), CHAT),
    "gpt-4.1-nano": CHAT,
    **dict.fromkeys(("o1", "o3", "o3-mini", "o4-mini"), O_SERIES),
    **dict.fromkeys(("gpt-5", "gpt-5-mini", "gpt-5-nano"), GPT5),
    "gpt-5.1": (True, ("none", "low", "medium", "high"), False),
    **dict.fromkeys(("gpt-5.2", "gpt-5.4", "gpt-5.4-mini", "gpt-5.5"), GPT52),
    "gpt-5-chat-latest": (False, (), False),
    "gpt-5.1-chat-latest": (False, (), False),
}


@pytest.mark.parametrize("model", sorted(CLAUDE))
def test_the_capability_table_says_what_anthropic_documents(model: str) -> None:
    types, efforts, thinks_unasked, samples = CLAUDE[model]
    caps = CLAUDE_MODELS[family(model)]
    assert set(caps.thinking) == types and caps.efforts == efforts
    assert caps.sampling == samples and caps.source == "table"
    stated, allowance = thinking_fields(caps, GenerateParams(max_tokens=300), f"anthropic/{model}")
    kind = stated["thinking"]["type"]  # never left out: what a model does then may change
    assert kind in types
    if kind != "disabled":  # a model that cannot stop thinking gets room to think
        assert thinks_unasked and allowance >= 4_000


def test_the_standins_rules_say_what_anthropic_documents() -> None:
    listed = {family(name): rules for name, rules in anthropic_rules.MODELS.items()}
    assert set(listed) == set(CLAUDE)  # the stand-in serves every documented model
    for model, (types, efforts, thinks_unasked, samples) in CLAUDE.items():
        rules = listed[model]
        assert set(rules.thinking) == types and rules.efforts == efforts, model
        assert rules.thinks_unasked == thinks_unasked and rules.samples == samples, model
    assert {m for m, r in listed.items() if r.display == "omitted"} == {
        "claude-sonnet-5",
        "claude-sonnet-5-5",
    }  # thinking text is omitted by default, as documented


@pytest.mark.parametrize("model", sorted(OPENAI))
def test_the_capability_table_says_what_openai_documents(model: str) -> None:
    reasons, efforts, logprobs = OPENAI[model]
    caps = OPENAI_MODELS[family(model)]
    assert caps.sampling == (not reasons)
    assert caps.efforts == efforts and caps.logprobs == logprobs


def test_the_standins_rules_say_what_openai_documents() -> None:
    for model, (reasons, efforts, logprobs) in OPENAI.items():
        rules = openai_rules.MODELS[model]
        assert (rules.reasoning, rules.efforts, rules.logprobs) == (reasons, efforts, logprobs)
    assert openai_rules.MODELS["gpt-5.6"].cache_writes  # GPT-5.6 bills cache writes
