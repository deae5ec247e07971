"""Pairs of replies with a participant's preference: recorded picks (the chosen reply with
each other reply of its turn; a tie, every two), or derived from differing ratings. Pairs across
turns are balanced (docs/tasks.md, paragraph "Prompts never name turns"): ratings drift over a
conversation, so without that the positions alone predict the gold.
"""

from __future__ import annotations

import random
import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from pydantic import Field

from attunebench.data.schema import Conversation, Response, Turn
from attunebench.tasks.base import Gold, GoldLevel

TIE = "tie"
DEFAULT_DERIVED_CAP = 4
IDENTITY_FLAG = "reveals-identity"
# Lower edges of the distance strata (turns between two replies), and the width in turns of
# the strata of the earlier reply's turn. Coarser strata (thirds of a conversation) left the
# earlier reply's turn predicting the gold at 0.56-0.59 on MultiESC valid and FailedESConv.
STRATA = (1, 2, 3, 5, 8, 13)
EARLY_STEP = 2
_WORD = re.compile(r"[a-z']+")


class PairGold(Gold):
    """A pair of replies and the participant's preference between them."""

    level: GoldLevel = "pair"
    first: str
    second: str
    chosen: str | None = None  # the preferred candidate's key; None for a tie
    tie: bool = False
    strength: int | None = None
    first_turn: int
    second_turn: int
    len_first: int
    len_second: int
    gap: float | None = None  # the rating difference of a derived pair
    # The hidden ids of the models that wrote the two replies (`Response.model`), where the
    # data has them: a judge's self-preference is audited on the pairs its own model wrote.
    first_model: str | None = None
    second_model: str | None = None
    # content cues of each candidate: name -> value
    cues_first: dict[str, float] = Field(default_factory=dict)
    cues_second: dict[str, float] = Field(default_factory=dict)
    answer_fields = ("tie", "strength", "gap")  # and which of the two was chosen

    @property
    def key(self) -> str:
        """The gold as a pick: the chosen key, or "tie"."""
        return TIE if self.tie or self.chosen is None else self.chosen

    @property
    def across_turns(self) -> bool:
        return self.first_turn != self.second_turn

    @property
    def later(self) -> str | None:
        """The key of the reply given later in the conversation (None: the same message)."""
        if not self.across_turns:
            return None
        return self.second if self.second_turn > self.first_turn else self.first

    @property
    def longer(self) -> str:
        """The key of the longer reply, or "tie" for equal lengths."""
        if self.len_first == self.len_second:
            return TIE
        return self.first if self.len_first > self.len_second else self.second


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str
    turn_index: int
    response: Response
    said_to: str = ""  # the user's message it answered

    @property
    def text(self) -> str:
        return self.response.text

    def cues(self) -> dict[str, float]:
        """Content cues a reference may read: question marks, and the share of the user's
        words the reply repeats."""
        words = set(_WORD.findall(self.said_to.lower()))
        shared = words & set(_WORD.findall(self.text.lower()))
        return {
            "questions": float(self.text.count("?")),
            "overlap": len(shared) / len(words) if words else 0.0,
        }


@dataclass(frozen=True, slots=True)
class Pair:
    first: Candidate
    second: Candidate
    gold_key: str  # the preferred candidate's key, or "tie"
    derived: bool = False
    strength: int | None = None
    gap: float | None = None

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

    @property
    def flagged(self) -> bool:
        return any(IDENTITY_FLAG in c.response.flags for c in (self.first, self.second))

    def gold(self) -> PairGold:
        return PairGold(
            derived=self.derived,
            first=self.first.key,
            second=self.second.key,
            chosen=None if self.gold_key == TIE else self.gold_key,
            tie=self.gold_key == TIE,
            strength=self.strength,
            first_turn=self.first.turn_index,
            second_turn=self.second.turn_index,
            len_first=len(self.first.text),
            len_second=len(self.second.text),
            gap=self.gap,
            first_model=self.first.response.model,
            second_model=self.second.response.model,
            cues_first=self.first.cues(),
            cues_second=self.second.cues(),
        )


def picked_pairs(turn: Turn) -> list[Pair]:
    preference = turn.preference
    if preference is None:
        return []
    candidates = [Candidate(r.id, turn.index, r, turn.user) for r in turn.responses]
    chosen = chosen_reply(turn)
    if not preference.tie and chosen is None:
        return []
    gold = TIE if preference.tie or chosen is None else chosen.id
    return [
        Pair(a, b, gold, strength=preference.strength)
        for a, b in combinations(candidates, 2)
        if preference.tie or gold in (a.key, b.key)
    ]


def stratum(pair: Pair) -> tuple[int, int]:
    """The balancing stratum of a pair across turns: its distance's stratum and the step of
    turns its earlier reply sits in."""
    early, late = sorted((pair.first.turn_index, pair.second.turn_index))
    return bisect_right(STRATA, late - early), early // EARLY_STEP


def derived_pairs(conversation: Conversation, cap: int, seed: int) -> list[Pair]:
    """Pairs from differing ratings: same-message pairs first, then pairs across turns
    balanced within each stratum (see the module docstring)."""
    same: list[Pair] = []
    # per stratum: across turns, the pairs whose preferred reply came first, and later
    pools: dict[tuple[int, int], tuple[list[Pair], list[Pair]]] = defaultdict(lambda: ([], []))
    rated = [
        (turn, response, response.rating)
        for turn in conversation.turns
        if turn.preference is None
        for response in turn.responses
        if response.rating is not None
    ]
    for (turn_a, a, rating_a), (turn_b, b, rating_b) in combinations(rated, 2):
        if rating_a == rating_b:
            continue
        across = turn_a.index != turn_b.index
        first, second = (
            Candidate(
                f"{turn.index}:{reply.id}" if across else reply.id, turn.index, reply, turn.user
            )
            for turn, reply in ((turn_a, a), (turn_b, b))
        )
        first_wins = rating_a > rating_b
        preferred = (first if first_wins else second).key
        pair = Pair(first, second, preferred, derived=True, gap=abs(rating_a - rating_b))
        if not across:
            same.append(pair)
        else:
            pools[stratum(pair)][0 if first_wins else 1].append(pair)
    rng = random.Random(f"{seed}:{conversation.id}")
    rng.shuffle(same)
    matched: list[tuple[Pair, Pair]] = []
    for key in sorted(pools):
        earlier, later = pools[key]
        rng.shuffle(earlier)
        rng.shuffle(later)
        matched += zip(earlier, later, strict=False)
    rng.shuffle(matched)
    chosen = same[:cap]
    for two in matched[: max(cap - len(chosen), 0) // 2]:
        chosen += two
    return sorted(chosen, key=lambda p: (p.turn_index, p.item_id))


@dataclass(frozen=True)
class PairOptions:
    derive: bool = True
    cap: int = DEFAULT_DERIVED_CAP
    seed: int = 0
    include_flagged: bool = False
    # Pairs across turns only where the person talked to a model (see `talked_to_model`).
    same_turn_only: bool = False

    def __post_init__(self) -> None:
        if self.cap < 0:
            raise ValueError(f"max_derived_pairs must be >= 0 (got {self.cap})")


def talked_to_model(conversation: Conversation) -> bool:
    """Whether the replies are a real model's, in a chat the person held with it
    (`context.labels.partner`): each message got one reply."""
    return conversation.context.labels.get("partner") == "model"


def all_pairs(conversation: Conversation, options: PairOptions) -> list[Pair]:
    """Every pair a conversation offers, flagged ones included, recorded picks first."""
    pairs = [pair for turn in conversation.turns for pair in picked_pairs(turn)]
    if options.derive:
        pairs.extend(derived_pairs(conversation, options.cap, options.seed))
    if options.same_turn_only and not talked_to_model(conversation):
        pairs = [pair for pair in pairs if not pair.across_turns]
    return pairs


def preference_pairs(conversation: Conversation, options: PairOptions) -> list[Pair]:
    """The pairs that are items: flagged ones left out unless asked for."""
    pairs = all_pairs(conversation, options)
    return pairs if options.include_flagged else [p for p in pairs if not p.flagged]


def flagged_left_out(conversations: Sequence[Conversation], options: PairOptions) -> dict[str, int]:
    """A pair task's `left_out`: the pairs left out for a reply that reveals its model."""
    found = 0
    if not options.include_flagged:
        found = sum(p.flagged for c in conversations for p in all_pairs(c, options))
    return {"pairs with a reply that reveals its model": found}


def chosen_reply(turn: Turn) -> Response | None:
    """The reply the person picked at a turn (None: no pick, or none of its replies)."""
    preference = turn.preference
    if preference is None or preference.chosen is None:
        return None
    return turn.response(preference.chosen)


def reference_replies(turn: Turn) -> tuple[Response, Response] | None:
    """The chosen reply at a turn and the rejected one (the lowest rated of several; the
    first in the data when ratings are missing or equal), if there are both."""
    chosen = chosen_reply(turn)
    if chosen is None or turn.preference is None or turn.preference.tie:
        return None
    others = [r for r in turn.responses if r.id != chosen.id]
    if not others:
        return None
    rejected = min(others, key=lambda r: r.rating if r.rating is not None else float("inf"))
    return chosen, rejected
