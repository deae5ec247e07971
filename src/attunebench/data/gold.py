"""How many items carry each task's gold, and who gave it.

The counts follow what each task uses:

- emotion: user turns with a state; conversation-level `context.emotion` is counted apart,
  since it labels a whole conversation rather than one turn;
- behavior: replies with at least one behavior label;
- preference: turns with two or more replies and a recorded pick or tie; and, apart, pairs of
  replies whose ratings differ (within one turn, and conversations with any such pair across
  turns), from which pairs can be derived where no pick was recorded;
- response: turns with something to judge a new reply against (a chosen reply, the text or
  behaviors the person said they needed);
- outcome: conversations whose outcome says how the person felt or judged it afterwards: a final
  intensity, its change from the first intensity they gave, an overall rating, or numeric end
  survey answers (ESConv: the seeker's empathy and relevance ratings of the supporter);
- rating: replies carrying a rating the person gave themselves (`rating` provenance
  first-person: ESConv seekers' feedback, collected ratings), and apart the turns where they gave
  feedback on the replies since their previous feedback (`Turn.feedback`), and the rated
  replies that are items themselves, in conversations with no such feedback
  (`derived.rated_replies`).

`given_by` counts each kind of item by the provenance its source declares for the field the
item's gold comes from, so a report can say "annotators" rather than "the person" where that is
who labelled it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from attunebench.data.derived import rated_replies
from attunebench.data.schema import Conversation, Source, Turn
from attunebench.frozen import Frozen

NOT_DECLARED = "not declared"


class EmotionGoldCounts(Frozen):
    turns_with_state: int
    conversations_with_context_emotion: int


class BehaviorGoldCounts(Frozen):
    responses_with_behaviors: int


class PreferenceGoldCounts(Frozen):
    turns_with_pick: int
    picks: int
    ties: int
    rating_pairs_within_turns: int
    turns_with_rating_pairs: int
    conversations_with_rating_pairs: int


class ResponseGoldCounts(Frozen):
    turns: int
    with_chosen_reply: int
    with_wanted_text: int
    with_wanted_behaviors: int


class OutcomeGoldCounts(Frozen):
    conversations: int
    with_final_intensity: int
    with_intensity_change: int
    with_rating: int
    survey_ratings: dict[str, int]
    """Numeric end-survey answers, by question."""


class RatingGoldCounts(Frozen):
    responses: int
    """Replies carrying the person's rating."""
    feedback_turns: int
    """Turns where the person rated the replies since their previous feedback."""
    conversations: int
    reply_items: int = 0
    """Rated replies that are items themselves (their conversation has no feedback turn)."""


class TaskGoldCounts(Frozen):
    emotion: EmotionGoldCounts
    behavior: BehaviorGoldCounts
    preference: PreferenceGoldCounts
    response: ResponseGoldCounts
    outcome: OutcomeGoldCounts
    rating: RatingGoldCounts


# The provenance field each kind of gold comes from (the first one a source declares).
GOLD_FIELDS: dict[str, tuple[str, ...]] = {
    "emotion": ("state", "state.intensity"),
    "context emotion": ("context.emotion",),
    "behavior": ("behaviors",),
    "preference": ("preference",),
    "rating pairs": ("rating",),
    "response": ("preference", "need"),
    "outcome": ("outcome",),
    "rating": ("rating",),
    "feedback": ("rating",),
}


def given_by(source: Source, kind: str) -> str:
    """Who gave a kind of gold in this source: its declared provenance, or `not declared`."""
    declared = (source.provenance.get(key) for key in GOLD_FIELDS[kind])
    return next((who for who in declared if who is not None), NOT_DECLARED)


def first_intensity(conversation: Conversation) -> float | None:
    return next(
        (
            t.state.intensity
            for t in conversation.turns
            if t.state and t.state.intensity is not None
        ),
        None,
    )


def _rating_pairs(turn: Turn) -> int:
    ratings = [r.rating for r in turn.responses if r.rating is not None]
    return sum(1 for a, b in combinations(ratings, 2) if a != b)


@dataclass(slots=True)
class GoldBuilder:
    """Counts gold conversation by conversation; `build()` freezes the counts."""

    counts: Counter[str] = field(default_factory=Counter)
    survey: Counter[str] = field(default_factory=Counter)
    by_kind: dict[str, Counter[str]] = field(default_factory=dict)

    def _given(self, kind: str, source: Source, items: int) -> None:
        if items:
            self.by_kind.setdefault(kind, Counter())[given_by(source, kind)] += items

    def add(self, conversation: Conversation) -> None:
        c, source = self.counts, conversation.source
        before = Counter(c)
        c["context_emotion"] += conversation.context.emotion is not None
        rated = {r.rating for t in conversation.turns for r in t.responses if r.rating is not None}
        c["conversations_with_rating_pairs"] += len(rated) > 1
        for turn in conversation.turns:
            c["turns_with_state"] += turn.state is not None
            c["responses_with_behaviors"] += sum(1 for r in turn.responses if r.behaviors)
            pairs = _rating_pairs(turn)
            c["rating_pairs"] += pairs
            c["turns_with_rating_pairs"] += pairs > 0
            self._add_preference(turn)
        if given_by(source, "rating") == "first-person":
            self._add_ratings(conversation)
        self._add_outcome(conversation)
        added = c - before
        for kind, key in (
            ("emotion", "turns_with_state"),
            ("context emotion", "context_emotion"),
            ("behavior", "responses_with_behaviors"),
            ("preference", "turns_with_pick"),
            ("rating pairs", "conversations_with_rating_pairs"),
            ("response", "response_turns"),
            ("outcome", "outcome_conversations"),
            ("rating", "rated_responses"),
            ("feedback", "feedback_turns"),
        ):
            self._given(kind, source, added[key])

    def _add_preference(self, turn: Turn) -> None:
        c, preference, need = self.counts, turn.preference, turn.need
        wanted = bool(need and need.text and need.text.strip())
        wanted_behaviors = bool(need and need.behaviors)
        c["with_wanted_text"] += wanted
        c["with_wanted_behaviors"] += wanted_behaviors
        chosen = None
        if preference is not None and preference.chosen is not None:
            chosen = turn.response(preference.chosen)
        picked = preference is not None and (chosen is not None or preference.tie)
        if preference is not None and picked and len(turn.responses) >= 2:
            c["turns_with_pick"] += 1
            c["ties"] += preference.tie
            c["picks"] += chosen is not None
        c["with_chosen_reply"] += chosen is not None
        c["response_turns"] += chosen is not None or wanted or wanted_behaviors

    def _add_ratings(self, conversation: Conversation) -> None:
        c, turns = self.counts, conversation.turns
        responses = sum(1 for t in turns for r in t.responses if r.rating is not None)
        feedback = sum(1 for t in turns if t.feedback is not None)
        c["rated_responses"] += responses
        c["feedback_turns"] += feedback
        c["rated_conversations"] += bool(responses or feedback)
        c["reply_items"] += len(rated_replies(conversation))

    def _add_outcome(self, conversation: Conversation) -> None:
        c, outcome = self.counts, conversation.outcome
        if outcome is None:
            return
        final = outcome.final_state.intensity if outcome.final_state else None
        numeric = [k for k, v in outcome.survey.items() if not isinstance(v, str)]
        self.survey.update(numeric)
        c["final_intensity"] += final is not None
        c["intensity_change"] += final is not None and first_intensity(conversation) is not None
        c["outcome_rating"] += outcome.rating is not None
        c["outcome_conversations"] += bool(
            final is not None or outcome.rating is not None or numeric
        )

    def build(self) -> tuple[TaskGoldCounts, dict[str, dict[str, int]]]:
        c = self.counts
        gold = TaskGoldCounts(
            emotion=EmotionGoldCounts(
                turns_with_state=c["turns_with_state"],
                conversations_with_context_emotion=c["context_emotion"],
            ),
            behavior=BehaviorGoldCounts(responses_with_behaviors=c["responses_with_behaviors"]),
            preference=PreferenceGoldCounts(
                turns_with_pick=c["turns_with_pick"],
                picks=c["picks"],
                ties=c["ties"],
                rating_pairs_within_turns=c["rating_pairs"],
                turns_with_rating_pairs=c["turns_with_rating_pairs"],
                conversations_with_rating_pairs=c["conversations_with_rating_pairs"],
            ),
            response=ResponseGoldCounts(
                turns=c["response_turns"],
                with_chosen_reply=c["with_chosen_reply"],
                with_wanted_text=c["with_wanted_text"],
                with_wanted_behaviors=c["with_wanted_behaviors"],
            ),
            outcome=OutcomeGoldCounts(
                conversations=c["outcome_conversations"],
                with_final_intensity=c["final_intensity"],
                with_intensity_change=c["intensity_change"],
                with_rating=c["outcome_rating"],
                survey_ratings=dict(sorted(self.survey.items())),
            ),
            rating=RatingGoldCounts(
                responses=c["rated_responses"],
                feedback_turns=c["feedback_turns"],
                conversations=c["rated_conversations"],
                reply_items=c["reply_items"],
            ),
        )
        given = {kind: dict(self.by_kind[kind].most_common()) for kind in sorted(self.by_kind)}
        return gold, given
