"""Structured item content sent alongside every prompt, for providers that cannot read prompts.

LLM providers ignore the hint. Baselines and the mock answer from it, and must answer in the
same JSON a task asks an LLM for, so the task's one strict parser reads every provider:

- `emotion` (uses `text`, the user message, and `labels`):
  {"primary": L, "emotions": [L, ...], "intensity": n, "valence": x, "arousal": x}
- `behavior` (uses `text`, the reply, and `labels`): {"behaviors": [L, ...]}
- `preference` (uses `candidates` {"A": ..., "B": ...}): {"choice": "A" | "B" | "tie"}
- `response` (uses `text`, the user message): the reply itself, as plain text
- `rating` (uses `text`, the last reply rated, `labels` [low, high] of the scale): {"rating": n}
- `outcome` (uses `history`, the whole conversation, and `labels`, the fields asked):
  {"<field>": n, ...}
- `judge_pairwise` (uses `text`, `candidates`, `reference`):
  {"winner": "A" | "B" | "tie", "reason": str}
- `judge_rubric` (uses `text`, `candidates` {"A": reply}, `reference`):
  {"score": 1-10, "reason": str}

`history` holds the conversation before the item as (role, text) pairs, for baselines that use
context. `reference` carries what the participant wanted (their chosen reply, free text).
`gold` is the item's gold, given only to providers that declare `reads_gold` (the simulated
`sim/` instruments that plant a known truth); no model or baseline ever sees it. `subject`
names the model whose answer a judge is asked about; only the simulated judge reads it (to
favour a model by a planted amount), and it never enters a cache key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

HintKind = Literal[
    "emotion",
    "behavior",
    "preference",
    "response",
    "rating",
    "outcome",
    "judge_pairwise",
    "judge_rubric",
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
    gold: dict[str, object] | None = None
    subject: str = ""
