"""Valid answers read off a rendered prompt, for servers that stand in for a model in tests.

A task prompt states the JSON form it wants in its system message ("in this form:
{"behaviors": [...]}") and, where labels are asked for, lists them there as
`- name: description`. `answer_from_prompt` finds both and answers in that form; only the
system message is read for them, so a conversation quoting such words cannot change the
form. A number is drawn from the scale the question states in the user message ("from 1 (...)
to 5 (...)"); an outcome question, whose fields differ by conversation, names them and their
scales in the user message ("Predict, on the scales given: name (..., from 1 to 5?); ...").
A prompt with no form (the response task) gets a plain-text reply. The choice among valid
answers is a hash of the messages, so the same request always gets the same answer and
different requests get different ones: runs score a spread of right and wrong answers,
identically each time.
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
# "from 1 (very poor) to 5 (very good)" or "from 1 to 5"
_SCALE = re.compile(r"from (-?\d+(?:\.\d+)?)(?: \([^)]*\))? to (-?\d+(?:\.\d+)?)")
_FIELDS = re.compile(r"Predict, on the scales given: (.*?)\. Answer with one JSON", re.S)
_FIELD = re.compile(r"(\w+) \(((?:[^()]|\([^()]*\))*)\)")
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


def on_scale(text: str, h: int) -> int:
    """A whole number on the first scale `text` states (1 to 5 if none), chosen by `h`.

    >>> on_scale("from 1 (very poor) to 5 (very good)?", 7)
    3
    """
    found = _SCALE.search(text)
    low, high = (round(float(found.group(1))), round(float(found.group(2)))) if found else (1, 5)
    return low + h % (high - low + 1)


def outcome_fields(prompt: str) -> list[tuple[str, str]]:
    """The (name, question) of each field an outcome prompt asks for.

    >>> outcome_fields("Predict, on the scales given: a (from 1 to 5?). Answer with one JSON")
    [('a', 'from 1 to 5?')]
    """
    block = _FIELDS.search(prompt)
    return _FIELD.findall(block.group(1)) if block else []


def _role(messages: Sequence[dict[str, Any]], role: str) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == role)


def answer_from_prompt(messages: Sequence[dict[str, Any]]) -> str:
    """A valid answer to the chat `messages` (OpenAI message dicts), chosen by their hash."""
    system, user = _role(messages, "system"), _role(messages, "user")
    h = _digest(messages)
    form = _FORM.search(system)
    if form is None:
        fields = outcome_fields(user)
        if fields:
            return json.dumps(
                {name: on_scale(q, h >> (8 * n)) for n, (name, q) in enumerate(fields)}
            )
        return REPLIES[h % len(REPLIES)]
    wanted = form.group(1)
    labels = menu_labels(system) or ["other"]
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
    elif wanted.startswith('{"rating"'):
        answer = {"rating": on_scale(user, h)}
    else:
        raise ValueError(f"no answer known for the form {wanted[:60]!r}")
    return json.dumps(answer)
