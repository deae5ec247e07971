"""What a fitted baseline learns from (`Example`). The hint every query carries,
`TaskHint`, sits beside the form of its answers in `attunebench.answerform`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from attunebench.answerform import TaskHint


@dataclass(frozen=True, slots=True)
class Example:
    """What a fitted baseline learns from: a train item's query as a model reads it (its
    hint, with its item key), and the item's gold (its JSON). `engine.training` builds them
    from a train split, as each task builds its items (`tasks.helpers.fitting.examples`)."""

    hint: TaskHint
    gold: Mapping[str, Any]
