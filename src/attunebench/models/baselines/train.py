"""A train split, read into the examples the fitted baselines learn from.

`baseline/majority` and `baseline/knn` learn from a dataset file that should be disjoint from
the data being evaluated: fitting on the evaluated data itself lets gold leak into the answers.
Each task's gold is read the way the task reads it: the reported state of a turn, or where a
corpus has only a conversation-level emotion, that label on the user's opening words
(emotion); the labels of each reply (behavior); the participant's pick among a turn's replies,
or where there is none, two rated replies whose ratings differ (preference; ties are skipped);
the feedback a person gave on the replies since their previous feedback (rating); and what they
reported after the conversation (outcome).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from pydantic import ValidationError

from attunebench.data.derived import FIVE, conversation_level, opening_words, outcome_fields
from attunebench.data.schema import Conversation, Turn
from attunebench.frozen import problem_text
from attunebench.models.registry import ProviderConfigError


class TrainSetError(ProviderConfigError):
    """The train split is missing or malformed (the message names file, line and field)."""


@dataclass(frozen=True, slots=True)
class EmotionExample:
    text: str
    primary: str
    intensity: float | None
    valence: float | None
    arousal: float | None


@dataclass(frozen=True, slots=True)
class BehaviorExample:
    text: str
    behaviors: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PreferenceExample:
    chosen: str
    rejected: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReplyExample:
    """A user message and the reply its author wanted (chosen, else the one continued with)."""

    user: str
    reply: str


@dataclass(frozen=True, slots=True)
class RatingExample:
    """The last reply a person's feedback covered, the rating they gave, and its scale (low,
    high): a 4 on 1-5 and a thumb on 0-1 are not the same quantity, so fits keep them apart."""

    text: str
    rating: float
    scale: tuple[float, float] = FIVE


@dataclass(frozen=True, slots=True)
class OutcomeExample:
    """A conversation's user messages, what the person reported afterwards, and each field's
    scale (low, high)."""

    text: str
    values: dict[str, float]
    scales: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TrainSet:
    path: str
    emotion: tuple[EmotionExample, ...]
    behavior: tuple[BehaviorExample, ...]
    preference: tuple[PreferenceExample, ...]
    reply: tuple[ReplyExample, ...]
    rating: tuple[RatingExample, ...] = ()
    outcome: tuple[OutcomeExample, ...] = ()
    conversation_ids: frozenset[str] = frozenset()

    def has_gold(self, kind: str) -> bool:
        """Whether the split holds the examples a hint kind is answered from."""
        examples = {
            "emotion": self.emotion,
            "behavior": self.behavior,
            "preference": self.preference,
            "judge_pairwise": self.preference,
            "response": self.reply,
            "rating": self.rating,
            "outcome": self.outcome,
        }
        return bool(examples[kind]) if kind in examples else True


def load_train_set(path: str | Path) -> TrainSet:
    """Read every gold label a train file holds, with errors that name file, line and field."""
    conversations = _read(Path(path))
    emotion: list[EmotionExample] = []
    behavior: list[BehaviorExample] = []
    preference: list[PreferenceExample] = []
    reply: list[ReplyExample] = []
    rating: list[RatingExample] = []
    outcome: list[OutcomeExample] = []
    for conversation in conversations:
        if conversation_level(conversation):
            first = conversation.turns[0].state
            emotion.append(
                EmotionExample(
                    opening_words(conversation),
                    str(conversation.context.emotion),
                    first.intensity if first else None,
                    None,
                    None,
                )
            )
        preference.extend(_rated_pairs(conversation))
        rating.extend(_ratings(conversation))
        values, scales, _ = outcome_fields(conversation)
        if values:
            said = "\n".join(turn.user for turn in conversation.turns)
            outcome.append(OutcomeExample(said, values, scales))
        for turn in conversation.turns:
            example = _emotion(turn)
            if example is not None:
                emotion.append(example)
            behavior.extend(
                BehaviorExample(r.text, r.behaviors) for r in turn.responses if r.behaviors
            )
            picked = _preference(turn)
            if picked is not None:
                preference.append(picked)
            wanted = _wanted_reply(turn)
            if wanted is not None:
                reply.append(ReplyExample(turn.user, wanted))
    return TrainSet(
        str(path),
        tuple(emotion),
        tuple(behavior),
        tuple(preference),
        tuple(reply),
        tuple(rating),
        tuple(outcome),
        frozenset(c.id for c in conversations),
    )


def _rated_pairs(conversation: Conversation) -> list[PreferenceExample]:
    """Two rated replies on turns without a pick, whose ratings differ: the higher is chosen."""
    rated = [
        (r.text, r.rating)
        for t in conversation.turns
        if t.preference is None
        for r in t.responses
        if r.rating is not None
    ]
    return [
        PreferenceExample(a if rating_a > rating_b else b, (b if rating_a > rating_b else a,))
        for (a, rating_a), (b, rating_b) in combinations(rated, 2)
        if rating_a != rating_b
    ]


def _ratings(conversation: Conversation) -> list[RatingExample]:
    """Each feedback with the last reply before it (the one the person had just read)."""
    scale = conversation.source.rating_scale
    bounds = (scale.low, scale.high) if scale is not None else FIVE  # as the rating task reads it
    out = []
    last_reply = ""
    for turn in conversation.turns:
        if turn.feedback is not None and last_reply:
            out.append(RatingExample(last_reply, turn.feedback, bounds))
        reply = turn.continued_response()
        if reply is not None:
            last_reply = reply.text
    return out


def _read(path: Path) -> list[Conversation]:
    if not path.is_file():
        raise TrainSetError(f"train split {path} does not exist")
    conversations = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                conversations.append(Conversation.model_validate_json(line))
            except ValidationError as error:
                first = error.errors()[0]
                field = ".".join(str(part) for part in first["loc"]) or "(record)"
                raise TrainSetError(f"{path}:{number}: {field}: {problem_text(first)}") from None
    return conversations


def _emotion(turn: Turn) -> EmotionExample | None:
    state = turn.state
    if state is None:
        return None
    primary = state.primary or (state.emotions[0] if state.emotions else None)
    if primary is None:
        return None
    return EmotionExample(turn.user, primary, state.intensity, state.valence, state.arousal)


def _preference(turn: Turn) -> PreferenceExample | None:
    chosen_id = turn.preference.chosen if turn.preference and not turn.preference.tie else None
    chosen = turn.response(chosen_id) if chosen_id else None
    if chosen is None:
        return None
    rejected = tuple(r.text for r in turn.responses if r.id != chosen.id)
    return PreferenceExample(chosen.text, rejected) if rejected else None


def _wanted_reply(turn: Turn) -> str | None:
    chosen_id = turn.preference.chosen if turn.preference and not turn.preference.tie else None
    chosen = turn.response(chosen_id) if chosen_id else None
    wanted = chosen or turn.continued_response()
    return None if wanted is None else wanted.text
