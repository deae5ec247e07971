"""Judges you can audit: prompts as named, versioned data (`calls.toml`), the queries a judge
answers and what it is told (`calls`), verdicts read into auditable records (`verdicts`), and
the statistics of a judge's agreement with the participants' own picks (`audit`).

The offline `proxy/minilm` judge is a provider, registered with the others in
`attunebench.models`.
"""

from attunebench.judge.calls import PAIRWISE, PAIRWISE_CHOICE, RUBRIC, Profile, profile_of
from attunebench.judge.templates import PromptError, PromptTemplate, delimit, load_prompt
from attunebench.judge.verdicts import read_verdict

__all__ = [
    "PAIRWISE",
    "PAIRWISE_CHOICE",
    "RUBRIC",
    "Profile",
    "PromptError",
    "PromptTemplate",
    "delimit",
    "load_prompt",
    "profile_of",
    "read_verdict",
]
