"""Valid answers read off a rendered prompt, for servers that stand in for a model in tests.

A task prompt states the JSON form it wants ("in this form: {"behaviors": [...]}", in its
system message) and, where labels are asked for, lists them as `- name: description`.
`answer_from_prompt` finds both and answers in that form; a prompt with no form (the response
task) gets a plain-text reply. The choice among valid answers is a hash of the messages, so
the same request always gets the same answer and different requests get different ones: runs
score a spread of right and wrong answers, identically each time.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from attunebench.data.jsonl import canonical_json

_FORM = re.compile(r"in this form:\s*(\{[^\n]*)")
_MENU = re.compile(r"exactly as listed:\s*\n((?:- [^\n]+\n?)+)")
_MENU_ITEM = re.compile(r"^- ([^:\n]+):", re.MULTILINE)
CHOICES = ("A", "B", "tie")
REPLIES = (
    "That sounds like a lot to carry. What part of it is weighing on you most right now?",
    "I'm sorry it's been so hard. It makes sense that you feel this way.",
    "Have you thought about making a list and taking one thing at a time?",
    "Thank you for telling me. I'm here, and we can go through it together if you like.",
)


def _digest(messages: Sequence[dict[str, Any]]) -> int:
    return int.from_bytes(hashlib.sha256(canonical_json(list(messages)).encode()).digest()[:8])


def menu_labels(prompt: str) -> list[str]:
    """The label names a prompt lists after "exactly as listed:", in order.

    >>> menu_labels("Write each name exactly as listed:\\n- joy: happy.\\n- fear: scared.\\n")
    ['joy', 'fear']
    """
    block = _MENU.search(prompt)
    return _MENU_ITEM.findall(block.group(1)) if block else []


def answer_from_prompt(messages: Sequence[dict[str, Any]]) -> str:
    """A valid answer to the chat `messages` (OpenAI message dicts), chosen by their hash."""
    prompt = "\n".join(str(message.get("content", "")) for message in messages)
    h = _digest(messages)
    form = _FORM.search(prompt)
    if form is None:
        return REPLIES[h % len(REPLIES)]
    wanted = form.group(1)
    labels = menu_labels(prompt) or ["other"]
    pick = labels[h % len(labels)]
    answer: dict[str, Any]
    if wanted.startswith('{"primary"'):
        answer = {
            "primary": pick,
            "emotions": [pick],
            "intensity": 1 + (h >> 8) % 5,
            "valence": round((h >> 16) % 21 / 10 - 1, 1),
            "arousal": (h >> 24) % 11 / 10,
        }
    elif wanted.startswith('{"behaviors"'):
        second = labels[(h >> 8) % len(labels)]
        answer = {"behaviors": list(dict.fromkeys([pick, second]))}
    elif wanted.startswith('{"choice"'):
        answer = {"choice": CHOICES[h % 3]}
    elif wanted.startswith('{"winner"'):
        answer = {"winner": CHOICES[h % 3], "reason": "It meets what they asked for."}
    elif wanted.startswith('{"score"'):
        answer = {"score": 1 + h % 10, "reason": "It meets some of what they asked for."}
    else:
        raise ValueError(f"no answer known for the form {wanted[:60]!r}")
    return json.dumps(answer)
