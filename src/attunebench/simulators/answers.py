"""Reading a simulated person's answers, strictly, with the tasks' parsers.

In choice mode the most probable option is the answer: a person reports one value, not an
average. Anything unreadable raises `InvalidAnswer`, recorded as an error, never an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from attunebench.data.schema import TaxonomyLabel
from attunebench.simulators.forms import MessageGold
from attunebench.simulators.records import Written
from attunebench.tasks.base import InvalidAnswer, Item, Output, Query
from attunebench.tasks.helpers.parsing import (
    answer_fields,
    bounded_number,
    most_probable,
    one_label,
)

T = TypeVar("T")


def failure(output: Output) -> str | None:
    """Why a call gave no answer, or None."""
    return None if output.ok else output.error or "no output"


def read_answer(
    output: Output, read: Callable[[Output], T], name: str = ""
) -> tuple[T | None, str | None]:
    """What `read` finds in the output, or why nothing: the call's failure, or the invalid
    answer (after `name: `, where given)."""
    if failure(output) is not None:
        return None, failure(output)
    try:
        return read(output), None
    except InvalidAnswer as invalid:
        return None, f"{name}: {invalid}" if name else str(invalid)


def message_record(
    item: Item[MessageGold], output: Output, rollout: int, prompt_id: str
) -> Written:
    """The message the simulated person wrote for `item` (none: the call failed), and the real."""
    return Written(
        conversation_id=item.conversation.id,
        turn_index=item.turn_index,
        rollout=rollout,
        text=output.text if output.ok else None,
        real=item.gold.message,
        prompt_id=prompt_id,
        error=failure(output),
    )


def message_of(output: Output) -> str:
    text = (output.text or "").strip()
    if not text:
        raise InvalidAnswer("the message is empty")
    return text


def _option(output: Output, query: Query) -> str | None:
    """The option a choice answer names most probably (None: it is a generated answer)."""
    if output.probabilities is None or query.choice is None:
        return None
    names = dict(zip(query.choice.keys, query.choice.labels, strict=True))
    return most_probable(output.probabilities, names)


def label_of(output: Output, query: Query, labels: Sequence[TaxonomyLabel]) -> str:
    chosen = _option(output, query)
    if chosen is not None:
        return chosen
    return one_label(answer_fields(output.text or "").get("label"), labels, "label")


def number_of(output: Output, query: Query, name: str, low: float, high: float) -> float:
    chosen = _option(output, query)
    if chosen is not None:
        return float(chosen)
    found = bounded_number(answer_fields(output.text or "").get(name), low, high, name)
    if found is None:
        raise InvalidAnswer(f"the answer gives no {name}")
    return found
