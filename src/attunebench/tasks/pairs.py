"""Pairs of replies with a participant's preference: recorded picks, or derived from ratings.

- A turn with a recorded pick (`preference.chosen`) pairs the chosen reply with each other
  reply of that turn; a recorded tie pairs every two replies of the turn, gold "tie".
- Where a corpus has ratings instead of picks (ESConv seeker feedback, USS satisfaction),
  rated replies on turns without a recorded preference are paired when their ratings differ;
  the higher-rated reply is the gold. Such pairs are marked `derived`, and when the two replies
  answer different user messages, `across_turns`. At most `cap` derived pairs are kept per
  conversation, the widest rating gaps first (the clearest preferences), so a long
  conversation cannot swamp the task.

A candidate's key is its response id, or `turn:id` for pairs across turns (ids repeat across
turns). The pair's first candidate is the one that comes first in the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from attunebench.data.schema import Conversation, Response, Turn

TIE = "tie"
DEFAULT_DERIVED_CAP = 4


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str
    turn_index: int
    response: Response

    @property
    def text(self) -> str:
        return self.response.text


@dataclass(frozen=True, slots=True)
class Pair:
    first: Candidate
    second: Candidate
    gold: str  # the preferred candidate's key, or "tie"
    derived: bool = False
    strength: int | None = None

    @property
    def item_id(self) -> str:
        return f"{self.first.key}~{self.second.key}"

    @property
    def across_turns(self) -> bool:
        return self.first.turn_index != self.second.turn_index

    @property
    def turn_index(self) -> int:
        """The turn the item is addressed by: the later reply's."""
        return max(self.first.turn_index, self.second.turn_index)

    def length_meta(self) -> dict[str, object]:
        len_a, len_b = len(self.first.text), len(self.second.text)
        longer = "equal" if len_a == len_b else ("A" if len_a > len_b else "B")
        return {"len_a": len_a, "len_b": len_b, "longer": longer}


def picked_pairs(turn: Turn) -> list[Pair]:
    preference = turn.preference
    if preference is None:
        return []
    candidates = [Candidate(r.id, turn.index, r) for r in turn.responses]
    if preference.tie:
        return [
            Pair(a, b, TIE, strength=preference.strength) for a, b in combinations(candidates, 2)
        ]
    if preference.chosen is None or turn.response(preference.chosen) is None:
        return []
    return [
        Pair(a, b, preference.chosen, strength=preference.strength)
        for a, b in combinations(candidates, 2)
        if preference.chosen in (a.key, b.key)
    ]


def derived_pairs(conversation: Conversation, cap: int = DEFAULT_DERIVED_CAP) -> list[Pair]:
    rated = [
        (turn.index, response, response.rating)
        for turn in conversation.turns
        if turn.preference is None
        for response in turn.responses
        if response.rating is not None
    ]
    found: list[tuple[float, Pair]] = []
    for (turn_a, a, rating_a), (turn_b, b, rating_b) in combinations(rated, 2):
        if rating_a == rating_b:
            continue
        same_turn = turn_a == turn_b
        first = Candidate(a.id if same_turn else f"{turn_a}:{a.id}", turn_a, a)
        second = Candidate(b.id if same_turn else f"{turn_b}:{b.id}", turn_b, b)
        gold = first.key if rating_a > rating_b else second.key
        found.append((abs(rating_a - rating_b), Pair(first, second, gold, derived=True)))
    # Widest gaps first; within a gap, same-turn pairs, then the earliest turns (stable order).
    found.sort(key=lambda entry: (-entry[0], entry[1].across_turns))
    return [pair for _, pair in found[:cap]]


def preference_pairs(
    conversation: Conversation, *, derive: bool = True, cap: int = DEFAULT_DERIVED_CAP
) -> list[Pair]:
    """Every pair a conversation offers, recorded picks first, in turn order."""
    pairs = [pair for turn in conversation.turns for pair in picked_pairs(turn)]
    if derive:
        pairs.extend(derived_pairs(conversation, cap))
    return pairs


def find_pair(pairs: list[Pair], turn_index: int, item_id: str) -> Pair:
    """The pair an item addresses (item ids repeat across turns: "a~b" at every turn)."""
    for pair in pairs:
        if (pair.turn_index, pair.item_id) == (turn_index, item_id):
            return pair
    raise KeyError(f"no reply pair {item_id!r} at turn {turn_index}")


def reference_replies(turn: Turn) -> tuple[Response, Response] | None:
    """The participant's chosen reply at a turn and the one they rejected, if there are both.

    With several other replies, the rejected one is the lowest rated (first in the data when
    ratings are missing or equal).
    """
    preference = turn.preference
    if preference is None or preference.tie or preference.chosen is None:
        return None
    chosen = turn.response(preference.chosen)
    others = [r for r in turn.responses if r.id != preference.chosen]
    if chosen is None or not others:
        return None
    rejected = min(others, key=lambda r: r.rating if r.rating is not None else float("inf"))
    return chosen, rejected
