"""Structured item content sent alongside every prompt, for providers that cannot read prompts.

LLM providers ignore the hint. Baselines and the mock answer from it, and must answer in the
same JSON a task asks an LLM for, so the task's one strict parser reads every provider:

| kind              | fields used                         | answer (JSON text)                               |
|-------------------|-------------------------------------|--------------------------------------------------|
| `emotion`         | `text` (user message), `labels`     | {"primary": L, "emotions": [L...], "intensity": n, "valence": x, "arousal": x} |
| `behavior`        | `text` (the reply), `labels`        | {"behaviors": [L...]}                            |
| `preference`      | `candidates` {"A": ..., "B": ...}   | {"choice": "A" | "B" | "tie"}                    |
| `response`        | `text` (user message)               | the reply itself, plain text                     |
| `judge_pairwise`  | `text`, `candidates`, `reference`   | {"winner": "A" | "B" | "tie", "reason": str}    |
| `judge_rubric`    | `text`, `candidates` {"A": reply}, `reference` | {"score": 1-10, "reason": str}        |

`history` holds the conversation before the item as (role, text) pairs, for baselines that use
context. `reference` carries what the participant wanted (their chosen reply, free text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

HintKind = Literal[
    "emotion", "behavior", "preference", "response", "judge_pairwise", "judge_rubric"
]


@dataclass(frozen=True, slots=True)
class TaskHint:
    kind: HintKind
    text: str = ""
    labels: tuple[str, ...] = ()
    candidates: dict[str, str] = field(default_factory=dict)
    history: tuple[tuple[str, str], ...] = ()
    reference: dict[str, str] = field(default_factory=dict)
    # The item's address, so seeded baselines give the same answer to the same item.
    item_key: str = ""
