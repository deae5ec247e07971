"""The judge prompts shipped in `judge/prompts/`."""

from __future__ import annotations

from functools import cache

from attunebench.judge.templates import PromptTemplate, load_prompts

PAIRWISE_ID = "judge-pairwise"
RUBRIC_ID = "judge-rubric"


@cache
def judge_prompts() -> dict[str, PromptTemplate]:
    return load_prompts("attunebench.judge")


def pairwise_prompt() -> PromptTemplate:
    return judge_prompts()[PAIRWISE_ID]


def rubric_prompt() -> PromptTemplate:
    return judge_prompts()[RUBRIC_ID]
