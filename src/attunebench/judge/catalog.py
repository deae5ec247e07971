"""The judge prompts shipped in `judge/prompts/`, and how a judge spec is labelled in reports."""

from __future__ import annotations

from functools import cache

from attunebench.judge.templates import PromptTemplate, load_prompts
from attunebench.models.registry import parse_spec, spec_kind

PAIRWISE_ID = "judge-pairwise"
RUBRIC_ID = "judge-rubric"


@cache
def judge_prompts() -> dict[str, PromptTemplate]:
    return load_prompts("attunebench.judge")


def pairwise_prompt() -> PromptTemplate:
    return judge_prompts()[PAIRWISE_ID]


def rubric_prompt() -> PromptTemplate:
    return judge_prompts()[RUBRIC_ID]


def judge_kind(spec: str) -> str:
    """`proxy` for the offline embedding judge; otherwise what the provider registry says."""
    return "proxy" if parse_spec(spec)[0] == "proxy" else spec_kind(spec)
