"""A run's spend against its dollar cap (`run --max-cost USD`), counted as calls come back.

Each call reserves its most (`call_cost`) before it is sent and settles at the cost of the
usage it returned; a call that could pass the cap, with what the run spent (every session) and
what the calls in flight reserved, is not sent (`CapReached`): the calls in flight finish, and
a later run with a larger cap resumes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from attunebench.models.base import GenerateParams, Message

if TYPE_CHECKING:  # the caller holds a SpendCap
    from attunebench.engine.caller import BoundModel

CHARS_PER_TOKEN = 4  # as the batch queue estimates a request's tokens


class CapReached(Exception):
    """The next call could pass the run's cap; the message says so in one line."""


def prompt_tokens(messages: Iterable[Message]) -> int:
    """A prompt's tokens, estimated at four characters a token.

    >>> prompt_tokens([Message("user", "12345678"), Message("user", "1")])
    3
    """
    return sum(math.ceil(len(m.content) / CHARS_PER_TOKEN) for m in messages)


def call_cost(bound: BoundModel, messages: Sequence[Message], params: GenerateParams) -> float:
    """The most one call of `bound` can cost: its prompt and its whole output allowance (the
    thinking allowance included: `Provider.call_budget`), at the batch price where it batches."""
    budget = bound.provider.call_budget(params)
    return bound.entry.price.cost(prompt_tokens(messages), budget, batched=bound.entry.batch)


@dataclass
class SpendCap:
    cap: float
    spent: float = 0.0
    reserved: float = 0.0
    stopped: str | None = None

    def reserve(self, cost: float) -> None:
        """Hold `cost` for a call about to be sent; `CapReached` if it would pass the cap."""
        if self.stopped is None and self.spent + self.reserved + cost > self.cap:
            self.stopped = (
                f"max cost: stopped before a call that could pass --max-cost ${self.cap:,.4f} "
                f"(${self.spent:,.4f} spent, ${self.reserved:,.4f} in calls in flight, "
                f"${cost:,.4f} for the next); what was recorded is kept: run the same "
                "command with a larger --max-cost to resume"
            )
        if self.stopped is not None:
            raise CapReached(self.stopped)
        self.reserved += cost

    def settle(self, reserved: float, cost: float) -> None:
        """A call came back (`cost`, from its usage; 0 for a failure) or was not sent."""
        self.reserved -= reserved
        self.spent += cost
