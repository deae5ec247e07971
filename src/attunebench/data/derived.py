"""Facts read off a conversation the same way by the tasks that score them and the baselines
that learn them: where a conversation-level emotion item ends, and what an outcome reports.
"""

from __future__ import annotations

from attunebench.data.schema import Conversation

DEFAULT_MESSAGES, DEFAULT_WORDS = 3, 60
FIVE = (1.0, 5.0)
CHANGE = "intensity_change"


def conversation_level(conversation: Conversation) -> bool:
    """Only a conversation-level emotion label: no turn's state names an emotion."""
    labelled = any(t.state and (t.state.emotions or t.state.primary) for t in conversation.turns)
    return conversation.context.emotion is not None and not labelled


def budget_turn(
    conversation: Conversation, messages: int = DEFAULT_MESSAGES, words: int = DEFAULT_WORDS
) -> int:
    """The turn by which the user has written `messages` messages and `words` words."""
    said = 0
    for count, turn in enumerate(conversation.turns, start=1):
        said += len(turn.user.split())
        if count >= messages and said >= words:
            return turn.index
    return conversation.turns[-1].index


def opening_words(
    conversation: Conversation, messages: int = DEFAULT_MESSAGES, words: int = DEFAULT_WORDS
) -> str:
    """The user's own words up to the budget, one message a line."""
    last = budget_turn(conversation, messages, words)
    return "\n".join(t.user for t in conversation.turns if t.index <= last)


def outcome_fields(
    conversation: Conversation,
) -> tuple[dict[str, float], dict[str, tuple[float, float]], float | None]:
    """What the person reported after the conversation, each on its scale, and the intensity
    they reported before it: `final_intensity`, `intensity_change`, `rating` (the source's
    scale), and every numeric end-survey answer on 1-5."""
    values: dict[str, float] = {}
    scales: dict[str, tuple[float, float]] = {}
    first = conversation.turns[0].state
    initial = first.intensity if first is not None else None
    outcome = conversation.outcome
    if outcome is None:
        return values, scales, initial
    final = outcome.final_state.intensity if outcome.final_state is not None else None
    if final is not None:
        values["final_intensity"], scales["final_intensity"] = final, FIVE
        if initial is not None:
            values[CHANGE], scales[CHANGE] = final - initial, (-4.0, 4.0)
    scale = conversation.source.rating_scale
    if outcome.rating is not None:
        values["rating"] = outcome.rating
        scales["rating"] = (scale.low, scale.high) if scale is not None else FIVE
    for key, answer in sorted(outcome.survey.items()):
        if isinstance(answer, int | float) and FIVE[0] <= answer <= FIVE[1] and key not in values:
            values[key], scales[key] = float(answer), FIVE
    return values, scales, initial
