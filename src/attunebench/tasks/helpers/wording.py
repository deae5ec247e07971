"""The wording task prompts share (wording.toml), and how a task prompt's digest covers it:
an edit to shared wording changes every task's recorded prompt version and cache key."""

from __future__ import annotations

import string

from attunebench.prompts import PromptTemplate, load_prompt

WORDING = load_prompt(__name__)
_TEXTS = dict(WORDING.texts)


def words(name: str, /, **fields: str) -> str:
    """The named piece of shared wording with `fields` filled in (values are used as given:
    quoted text keeps its own spacing)."""
    return string.Template(_TEXTS[name]).substitute(fields)


def task_prompt(module: str, prompt_id: str | None = None) -> PromptTemplate:
    """A prompt in the file beside a task module (`attunebench.tasks.emotion` -> emotion.toml),
    its digest covering the shared wording too."""
    return load_prompt(module, prompt_id).sharing(WORDING)
