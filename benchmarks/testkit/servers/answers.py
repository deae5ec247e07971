"""Valid answers read off a rendered prompt, for servers that stand in for a model in tests.

A server sees only the messages, so it asks each registered answer form whether the prompt is
one of its own (`AnswerForm.read_prompt`, from the system message only, so a conversation
quoting such words cannot change it), and the first that reads it draws a valid answer; a
prompt no form reads gets a plain-text reply. The draw is seeded by a hash of the messages:
runs score a spread of right and wrong answers, identically each time.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from attunebench.answerform import FORMS, AnswerForm
from attunebench.data.jsonl import canonical_json
from attunebench.tasks import load_tasks

REPLIES = (
    "That sounds like a lot to carry. What part of it is weighing on you most right now?",
    "I'm sorry it's been so hard. It makes sense that you feel this way.",
    "Have you thought about making a list and taking one thing at a time?",
    "Thank you for telling me. I'm here, and we can go through it together if you like.",
)


def _role(messages: Sequence[dict[str, Any]], role: str) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == role)


def form_of(kind: str) -> AnswerForm:
    """The answer form registered for a hint kind (every task's, once tasks are loaded)."""
    load_tasks()
    return FORMS.get(kind)


def answer_from_prompt(messages: Sequence[dict[str, Any]]) -> str:
    """A valid answer to the chat `messages` (OpenAI message dicts), chosen by their hash."""
    load_tasks()  # every task's form registered
    system, user = _role(messages, "system"), _role(messages, "user")
    h = int.from_bytes(hashlib.sha256(canonical_json(list(messages)).encode()).digest()[:8])
    for kind in FORMS:
        form = FORMS.get(kind)
        hint = form.read_prompt(system, user)
        if hint is not None:
            if not hint.labels:  # a prompt listing no labels: any name will do
                hint = dataclasses.replace(hint, labels=("other",))
            return form.random(hint, np.random.default_rng(h))
    return REPLIES[h % len(REPLIES)]
