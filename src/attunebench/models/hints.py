"""Structured item content sent alongside every prompt, for providers that cannot read prompts.

LLM providers ignore the hint. Baselines and the mock answer from it, and must answer in the
same JSON a task asks an LLM for, so the task's one strict parser reads every provider.

Each task declares its answers once, in an `AnswerForm` (see `attunebench.answerform`)
carried by every hint it sends: the JSON its parser reads, a fixed valid answer, a random one
and, where it can, the gold's. `kind` names the form (the task's own name, or a judge call's
`judge_pairwise` / `judge_rubric`); a new task adds a kind by declaring its form, nothing here.
The task modules' docstrings say which fields of the hint each kind fills.

`history` holds the conversation before the item as (role, text) pairs, for baselines that use
context. `reference` carries what the participant wanted (their chosen reply, free text).
`gold` is the item's gold, given only to providers that declare `reads_gold` (the simulated
`sim/` instruments that plant a known truth); no model or baseline ever sees it. `subject`
names the model whose answer a judge is asked about; only the simulated judge reads it (to
favour a model by a planted amount), and it never enters a cache key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from attunebench.answerform import AnswerForm, Schema

# The name of an answer form: a task's, or a judge call's. Open: a task declares its own.
HintKind = str


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
    # What a valid answer looks like (None: plain text). Not content: kept out of cache keys.
    form: AnswerForm | None = field(default=None, compare=False)
    # The model whose answer a judge is asked about (only the simulated judge reads it).
    subject: str = ""

    def schema(self) -> Schema | None:
        """The JSON schema of a valid answer, where the hint's form declares one."""
        return None if self.form is None else self.form.schema(self)


@dataclass(frozen=True, slots=True)
class Example:
    """What a fitted baseline learns from: a train item's query as a model reads it (its
    hint, with its item key), and the item's gold (its JSON). `engine.training` builds them
    from a train split, as each task builds its items (`tasks.fitting.examples`)."""

    hint: TaskHint
    gold: Mapping[str, Any]
