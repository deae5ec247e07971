"""Every per-model fact is cited, and the stand-ins' tables agree with the code's.

The capability tables (`models.capabilities`, `models.claude_models`) and the stand-ins'
rules (`testing.anthropic_rules`, `testing.openai_rules`) are written apart, each from the
providers' pages; each entry names its pages (or SDK files) and the day they were read, and
an entry without is refused here. The two tables are then compared fact by fact: every
disagreement is listed, and there must be none. The price tables of docs/frontier.md, and
any price examples/ ship, carry a page and a date on each row.

A few facts are also checked against the words of the pages they come from (quoted below),
so that a mistake both tables share cannot pass as agreement.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from attunebench.models import GenerateParams, Message
from attunebench.models import claude_models as claude_table
from attunebench.models.anthropic import API_VERSION
from attunebench.models.capabilities import (
    CLAUDE_MODELS,
    CLAUDE_SOURCES,
    OPENAI_MODELS,
    OPENAI_SOURCES,
    Capabilities,
    Citation,
    at_effort,
    family,
)
from attunebench.models.claude_models import thinking_fields
from testkit.servers import anthropic_rules, openai_rules

ROOT = Path(__file__).resolve().parents[2]
PRICE_ROW = re.compile(r"^\|.*\$\d")  # a row of a price table
DATED_PAGE = re.compile(r"(https?://\S+|[\w.-]+\.[a-z]{2,}/\S+).*\d{4}-\d{2}-\d{2}")


def uncited(
    sources: Mapping[str, tuple[Citation, ...]], table: Mapping[str, object]
) -> Iterator[str]:
    for name in table:
        cited = sources.get(name, ())
        if not cited:
            yield f"{name}: no source"
        for citation in cited:
            problem = citation.problem()
            if problem is not None:
                yield f"{name}: {problem}"


def test_every_fact_of_the_tables_and_the_standins_is_cited() -> None:
    missing = [
        *uncited(CLAUDE_SOURCES, CLAUDE_MODELS),
        *uncited(OPENAI_SOURCES, OPENAI_MODELS),
        *uncited(
            claude_table.SOURCES,
            dict.fromkeys(
                ("THINKING_TYPES", "EFFORTS", "MIN_BUDGET", "TOKENS_PER_HOUR", "STREAMING_AFTER_S"),
                0,
            ),
        ),
        *uncited(anthropic_rules.SOURCES, anthropic_rules.MODELS),
        *uncited(anthropic_rules.SOURCES, dict.fromkeys(("EFFORTS", "THINKING_TYPES"), 0)),
        *uncited(openai_rules.SOURCES, openai_rules.MODELS),
    ]
    assert missing == []


def test_a_fact_without_a_page_or_a_date_is_refused() -> None:
    assert Citation("https://platform.claude.com/docs/en/x", "2026-12-05").problem() is None
    assert Citation("openai SDK 3.3.1 types/shared/chat_model.py", "2026-12-05").problem() is None
    assert Citation("the docs", "2026-12-05").problem() is not None
    assert Citation("https://platform.claude.com/docs/en/x", "December").problem() is not None
    assert list(uncited({}, {"claude-x": 0})) == ["claude-x: no source"]


def price_rows() -> Iterator[tuple[str, str]]:
    for path in [ROOT / "docs" / "frontier.md", *sorted((ROOT / "examples").glob("*"))]:
        for line in path.read_text("utf-8").splitlines():
            if PRICE_ROW.match(line) or (path.suffix == ".toml" and "price =" in line):
                yield path.name, line


def test_every_price_row_names_its_page_and_the_day_it_was_read() -> None:
    rows = list(price_rows())
    assert len(rows) >= 10  # the tables are there
    assert [row for row in rows if not DATED_PAGE.search(row[1])] == []


def claude_facts(caps: Capabilities) -> dict[str, object]:
    return {
        "thinking": set(caps.thinking),
        "efforts": caps.efforts,
        "default effort": caps.default_effort,
        "thinking off up to effort": caps.thinking_off_max_effort,
        "sampling": caps.sampling,
        "output limit": caps.max_output_tokens,
        "retired": caps.lifecycle == "retired",
    }


def standin_claude_facts(rules: anthropic_rules.Rules) -> dict[str, object]:
    return {
        "thinking": set(rules.thinking),
        "efforts": rules.efforts,
        "default effort": rules.default_effort,
        "thinking off up to effort": rules.off_max_effort,
        "sampling": rules.samples,
        "output limit": rules.max_output,
        "retired": rules.lifecycle == "retired",
    }


def disagreements(
    code: Mapping[str, dict[str, object]], standin: Mapping[str, dict[str, object]]
) -> list[str]:
    found = [f"{m}: in the code's table only" for m in sorted(code.keys() - standin.keys())]
    found += [f"{m}: in the stand-in's table only" for m in sorted(standin.keys() - code.keys())]
    for model in sorted(code.keys() & standin.keys()):
        for fact, value in code[model].items():
            if standin[model][fact] != value:
                found.append(f"{model}: {fact}: code {value!r}, stand-in {standin[model][fact]!r}")
    return found


def test_the_code_and_the_anthropic_standin_agree_fact_by_fact() -> None:
    code = {m: claude_facts(caps) for m, caps in CLAUDE_MODELS.items()}
    standin = {family(m): standin_claude_facts(r) for m, r in anthropic_rules.MODELS.items()}
    assert disagreements(code, standin) == []


def test_the_code_and_the_anthropic_standin_agree_on_efforts_and_thinking_types() -> None:
    assert claude_table.EFFORTS == anthropic_rules.EFFORTS  # lowest first, in both
    assert set(claude_table.THINKING_TYPES) == set(anthropic_rules.THINKING_TYPES)


# What the stand-ins may take from the code: its own protocol (a request's key, the pre-flight's
# header) and the shape of a citation, never a fact about a provider.
PLUMBING = {"request_key", "PREFLIGHT_HEADER", "Citation", "tables"}
STANDINS = ("anthropic_rules", "anthropic_stub", "openai_rules", "openai_stub", "fault_server")


@pytest.mark.parametrize("module", STANDINS)
def test_a_standin_restates_the_provider_facts_it_enforces(module: str) -> None:
    tree = ast.parse((ROOT / "benchmarks" / "testkit" / "servers" / f"{module}.py").read_text())
    taken = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attunebench.models")
        for alias in node.names
    }
    assert taken <= PLUMBING


def test_a_wrong_effort_in_the_code_is_refused_by_the_standin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(claude_table, "EFFORTS", (*claude_table.EFFORTS, "ultra"))  # planted
    wrong = CLAUDE_MODELS["claude-opus-4-7"].model_copy(update={"efforts": claude_table.EFFORTS})
    params = GenerateParams(max_tokens=300, effort="ultra")
    fields, _ = thinking_fields(wrong, params, "anthropic/claude-opus-4-7")
    messages = [Message("user", "I lost my job today.").to_dict()]
    body = {"model": "claude-opus-4-7", "max_tokens": 300, "messages": messages, **fields}
    allowed = "'low', 'medium', 'high', 'xhigh', 'max'"
    said = f"output_config.effort: Input should be {allowed}"
    assert anthropic_rules.refusal(body, API_VERSION) == (400, said)
    assert claude_table.EFFORTS != anthropic_rules.EFFORTS  # and the comparison above fails


def openai_facts(caps: Capabilities) -> dict[str, object]:
    plain = at_effort(caps, None)  # at the model's default effort
    return {
        "reasons": caps.reasoning,
        "efforts": caps.efforts,
        "logprobs at the default effort": plain.logprobs,
        "chat completions": caps.chat,
    }


def standin_openai_facts(rules: openai_rules.Rules) -> dict[str, object]:
    return {
        "reasons": rules.reasoning,
        "efforts": rules.efforts,
        "logprobs at the default effort": rules.logprobs or rules.default_effort == "none",
        "chat completions": not rules.responses_only,
    }


def test_the_code_and_the_openai_standin_agree_on_every_model_both_list() -> None:
    code = {m: openai_facts(caps) for m, caps in OPENAI_MODELS.items()}
    standin = {family(m): standin_openai_facts(r) for m, r in openai_rules.MODELS.items()}
    shared = code.keys() & standin.keys()
    assert len(shared) >= 20
    assert disagreements({m: code[m] for m in shared}, {m: standin[m] for m in shared}) == []
    assert standin.keys() - code.keys() == set()  # the stand-in serves nothing the code lacks


def test_the_comparison_lists_each_disagreement() -> None:
    code = {"claude-x": {"efforts": ("low",), "sampling": True}, "claude-y": {}}
    standin = {"claude-x": {"efforts": ("low", "high"), "sampling": True}}
    assert disagreements(code, standin) == [
        "claude-y: in the code's table only",
        "claude-x: efforts: code ('low',), stand-in ('low', 'high')",
    ]


# Facts as the pages word them (platform.claude.com and the SDKs, read 2026-12-05).
DOCUMENTED = [
    # "thinking can only be disabled when effort is high or lower" (Opus 5 overview)
    ("claude-opus-5", "thinking off up to effort", "high"),
    ("claude-haiku-5-5", "thinking off up to effort", "high"),
    # "send thinking: {type: between_tools} instead of disabled" (Sonnet 5.5 migration guide)
    ("claude-sonnet-5-5", "thinking", {"adaptive", "between_tools"}),
    # "Both thinking: {type: disabled} and manual extended thinking return a 400 error"
    ("claude-fable-5", "thinking", {"adaptive"}),
    ("claude-mythos-5", "thinking", {"adaptive"}),
    # "Claude Opus 5.5 and Claude Haiku 5.5 default to medium" (effort page)
    ("claude-opus-5-5", "default effort", "medium"),
    ("claude-haiku-5-5", "default effort", "medium"),
    # effort is supported on "... Claude Sonnet 4.6 and Claude Opus 4.5" (effort page)
    ("claude-opus-4-5", "efforts", ("low", "medium", "high")),
    # 128K maximum output (model overview pages)
    ("claude-sonnet-4-6", "output limit", 128_000),
    ("claude-sonnet-5", "output limit", 128_000),
    ("claude-sonnet-5-5", "output limit", 128_000),
    ("claude-haiku-5-5", "output limit", 128_000),
    # retired (model deprecations page)
    ("claude-3-5-haiku", "retired", True),
    ("claude-3-7-sonnet", "retired", True),
]


@pytest.mark.parametrize(("model", "fact", "value"), DOCUMENTED)
def test_the_facts_the_pages_word_hold_in_both_tables(model: str, fact: str, value: object) -> None:
    assert claude_facts(CLAUDE_MODELS[model])[fact] == value
    [rules] = [r for m, r in anthropic_rules.MODELS.items() if family(m) == model]
    assert standin_claude_facts(rules)[fact] == value


def test_the_openai_facts_the_sdk_words_hold_in_both_tables() -> None:
    # chat_model.py lists gpt-5.6-sol, -terra, -luna; reasoning_effort.py adds "max"
    for model in ("gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna"):
        assert OPENAI_MODELS[model].efforts[-1] == "max"
        assert openai_rules.MODELS[model].efforts[-1] == "max"
    # "gpt-5.1 defaults to none, which does not perform reasoning": sampling and logprobs
    for model in ("gpt-5.1", "gpt-5.5"):
        plain = at_effort(OPENAI_MODELS[model], None)
        assert plain.logprobs and plain.sampling
        assert not at_effort(OPENAI_MODELS[model], "low").logprobs


@pytest.mark.parametrize("model", sorted(CLAUDE_MODELS))
def test_a_call_that_asks_no_thinking_states_what_the_model_accepts(model: str) -> None:
    caps = CLAUDE_MODELS[model]
    for effort in (None, *caps.efforts):
        params = GenerateParams(max_tokens=300, effort=effort)
        stated, allowance = thinking_fields(caps, params, f"anthropic/{model}")
        kind = stated["thinking"]["type"]  # never left out: what a model does then may change
        assert kind in caps.thinking
        if kind == "adaptive":  # a model that cannot stop thinking gets room to think
            assert allowance >= 4_000
        sent = stated.get("output_config", {}).get("effort")
        ceiling = caps.thinking_off_max_effort
        if kind in ("disabled", "between_tools") and ceiling and sent:
            assert claude_table.EFFORTS.index(sent) <= claude_table.EFFORTS.index(ceiling)
