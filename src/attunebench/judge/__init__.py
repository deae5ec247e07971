"""Judges you can audit: prompts as named, versioned data, the offline proxy, audit statistics.

Importing this package registers the `proxy/` provider (`proxy/minilm`: an embedding-similarity
stand-in for an LLM judge, labelled `proxy` in reports).
"""

from attunebench.judge import audit
from attunebench.judge.catalog import (
    PAIRWISE_ID,
    RUBRIC_ID,
    judge_prompts,
    pairwise_prompt,
    rubric_prompt,
)
from attunebench.judge.proxy import ProxyJudge
from attunebench.judge.templates import PromptError, PromptTemplate, delimit, load_prompts

__all__ = [
    "PAIRWISE_ID",
    "RUBRIC_ID",
    "PromptError",
    "PromptTemplate",
    "ProxyJudge",
    "audit",
    "delimit",
    "judge_prompts",
    "load_prompts",
    "pairwise_prompt",
    "rubric_prompt",
]
