"""Person-hidden twins: each item asked again with the person's own words hidden.

`run --person hidden` (or `both`) asks an item's twin: the same item and gold, its prompts
reading the conversation with the person's words replaced by a placeholder (`data.person`).
Items are built on the real conversation and swapped after, so the gold is exactly the shown
item's, and the twin keeps the real conversation (`Item.happened`) to be scored against. A task
that evaluates judges keeps its items as they are: the person gap is a model's.

>>> hidden_variant("blind"), hidden_variant(""), shown_variant("informed+person-hidden")
('blind+person-hidden', 'person-hidden', 'informed')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from attunebench.data.person import hide_person
from attunebench.data.schema import Conversation

if TYPE_CHECKING:
    from attunebench.tasks.base import Item

# The context an item is asked in (a task without context modes: ""), and whether the person's
# words are hidden from it.
Variant = Literal[
    "", "blind", "informed", "person-hidden", "blind+person-hidden", "informed+person-hidden"
]
PersonOption = Literal["shown", "hidden", "both"]
PERSON_OPTIONS: tuple[PersonOption, ...] = ("shown", "hidden", "both")
DEFAULT_PERSON: Final[PersonOption] = "shown"
PERSON_HIDDEN: Final = "person-hidden"

_TWIN_OF: dict[str, Variant] = {
    "": "person-hidden",
    "blind": "blind+person-hidden",
    "informed": "informed+person-hidden",
}

ItemT = TypeVar("ItemT", bound="Item[Any]")


def hidden_variant(variant: str) -> Variant:
    """The variant of the twin of an item asked in `variant` (its context mode, or "")."""
    return _TWIN_OF[variant]


def is_person_hidden(variant: str) -> bool:
    """Whether records of `variant` are person-hidden twins."""
    return variant == PERSON_HIDDEN or variant.endswith("+" + PERSON_HIDDEN)


def shown_variant(variant: str) -> str:
    """The variant of the shown item a twin's variant is the twin of (a shown one: itself)."""
    return "" if variant == PERSON_HIDDEN else variant.removesuffix("+" + PERSON_HIDDEN)


def check_person(option: str) -> PersonOption:
    """`--person` as given, checked."""
    for known in PERSON_OPTIONS:
        if option == known:
            return known
    raise ValueError(f"--person must be one of {', '.join(PERSON_OPTIONS)} (got {option!r})")


def person_twins(items: Iterable[ItemT], option: PersonOption) -> Iterator[ItemT]:
    """The items as `option` asks: as they are (`shown`), their twins (`hidden`), or each
    followed by its twin (`both`). Items of one conversation share its hidden copy."""
    hidden: dict[str, Conversation] = {}
    for item in items:
        if option != "hidden":
            yield item
        if option == "shown":
            continue
        real = item.conversation
        if real.id not in hidden:
            hidden[real.id] = hide_person(real)
        yield replace(
            item,
            conversation=hidden[real.id],
            variant=hidden_variant(item.variant),
            happened=real,
        )
