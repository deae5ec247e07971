"""Planted corpora for the headlines read within corpus parts: parts that differ by design, and
an end survey whose second question some people skipped, each with what reading the person
reveals, so that a rule that knows only the part or the fields asked can be told from a
reader of the person.

- `rated_parts`: conversations of several corpus parts (source names), each person rating the
  replies at every other message (ESConv's seeker feedback, 1-5) around their part's own mean
  (a suite's parts differ so: FailedESConv was chosen for failing, Topical-Chat's people rate
  4 or 5), plus a lasting effect of their own and some noise at each rating;
- `survey_corpus`: one corpus of chats rated 1-5 afterwards, with a second survey question
  (`ease`) that about half of the people answered; those who answered rated the chat 2.50 on
  average, those who skipped it 2.17 (a user's CSV of human-chatbot chats, as brought in).

Each returns the conversations and, per conversation, what a reader of the person knows: the
person's own effect (`rated_parts`) or the quantile their rating was drawn at
(`survey_corpus`), from which a test's reader predicts with noise of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attunebench.data.schema import Context, Conversation, Outcome, RatingScale, Source, Turn

SURVEY_PART = "planted-survey"
SECOND_FIELD = "ease"
# The rating's shares (1 to 5) of people who answered the second question (mean 2.50) and of
# those who skipped it (mean 2.17).
ANSWERED_SHARES = (0.25, 0.25, 0.30, 0.15, 0.05)
SKIPPED_SHARES = (0.35, 0.30, 0.23, 0.07, 0.05)
PARTS = (("planted-high", 4.5), ("planted-low", 3.0))


def conversation_in_part(
    cid: str, part: str, turns: Sequence[Turn], outcome: Outcome | None = None
) -> Conversation:
    return Conversation(
        id=cid,
        source=Source(
            kind="simulated",
            name=part,
            provenance={"rating": "simulated", "outcome": "simulated"},
            rating_scale=RatingScale(low=1, high=5),
        ),
        taxonomy="attunebench-default",
        context=Context(),
        turns=tuple(turns),
        outcome=outcome,
    )


def rated_parts(
    per_part: int = 60,
    parts: Sequence[tuple[str, float]] = PARTS,
    seed: int = 0,
    turns: int = 8,
) -> tuple[list[Conversation], dict[str, float]]:
    """Conversations of each part (name, mean rating), the person rating at every other
    message: their part's mean plus their own effect N(0, 0.7) and N(0, 0.5) at each rating,
    rounded into 1-5; and each conversation's person effect."""
    rng = np.random.default_rng(seed)
    out, effects = [], {}
    for name, mean in parts:
        for c in range(per_part):
            cid = f"{name}-{c}"
            effect = float(rng.normal(0.0, 0.7))
            said = []
            for t in range(turns):
                rating = float(np.clip(np.rint(mean + effect + rng.normal(0.0, 0.5)), 1, 5))
                feedback = rating if t % 2 else None
                said.append(Turn(index=t, user=f"Message {t} of {cid}.", feedback=feedback))
            out.append(conversation_in_part(cid, name, said))
            effects[cid] = effect
    return out, effects


def survey_corpus(
    conversations: int = 400, seed: int = 0
) -> tuple[list[Conversation], dict[str, float]]:
    """One corpus of chats rated afterwards (see the module docstring), 2 to 6 messages long;
    and the quantile each rating was drawn at (the person's answer, which a reader reads)."""
    rng = np.random.default_rng(seed)
    out, quantiles = [], {}
    for c in range(conversations):
        cid = f"{SURVEY_PART}-{c}"
        answered = bool(rng.random() < 0.5)
        shares = ANSWERED_SHARES if answered else SKIPPED_SHARES
        quantile = float(rng.random())
        rating = float(1 + np.searchsorted(np.cumsum(shares), quantile))
        survey: dict[str, str | float] = {}
        if answered:
            survey[SECOND_FIELD] = float(np.clip(np.rint(1 + 4 * quantile + rng.normal()), 1, 5))
        said = [
            Turn(index=t, user=f"Message {t} of {cid}.") for t in range(2 + int(rng.integers(5)))
        ]
        out.append(
            conversation_in_part(cid, SURVEY_PART, said, Outcome(rating=rating, survey=survey))
        )
        quantiles[cid] = quantile
    return out, quantiles
