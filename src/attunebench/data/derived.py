"""Facts read off a conversation the same way by the tasks that score them, the baselines
that learn them and the importers that report them: where a conversation-level emotion item
ends, what an outcome reports, and which replies' own ratings are rating items.
"""

from __future__ import annotations

from collections.abc import Iterator

from attunebench.data.schema import Conversation, Outcome, Response, Turn

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


def rated_replies(conversation: Conversation) -> list[tuple[Turn, Response, float]]:
    """The replies whose own rating is an item of the rating task: every rated reply of a
    conversation in which no user message carries feedback. Where one does (ESConv's seeker
    feedback; ConvAI1, Topical-Chat and USS, which carry both), the feedback items already
    cover those ratings, and taking both would count each twice."""
    if any(turn.feedback is not None for turn in conversation.turns):
        return []
    return [
        (t, r, r.rating) for t in conversation.turns for r in t.responses if r.rating is not None
    ]


def outcome_scale(outcome: Outcome, name: str) -> tuple[float, float]:
    """The scale an outcome field is scored on: the one `outcome.scales` declares for it, else
    1 to 5 (final intensity's, and what an undeclared rating or survey answer is taken to be
    on). The replies' rating scale is never borrowed: a dialogue score out of 5 often sits
    beside thumbs on the replies."""
    declared = outcome.scales.get(name)
    return FIVE if declared is None else (declared.low, declared.high)


def outcome_fields(
    conversation: Conversation,
) -> tuple[dict[str, float], dict[str, tuple[float, float]], float | None]:
    """What the person reported after the conversation, each on its scale (`outcome_scale`),
    and the intensity they reported before it: `final_intensity`, `intensity_change`, `rating`,
    and every numeric end-survey answer on its scale (one off its scale is not scored; `data
    validate` names it)."""
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
    answers: list[tuple[str, str | float | None]] = [("rating", outcome.rating)]
    for key, answer in [*answers, *sorted(outcome.survey.items())]:
        low, high = outcome_scale(outcome, key)
        if isinstance(answer, int | float) and low <= answer <= high and key not in values:
            values[key], scales[key] = float(answer), (low, high)
    return values, scales, initial


def off_scale(outcome: Outcome) -> Iterator[tuple[str, float, tuple[float, float]]]:
    """(field path, value, scale) of each outcome number that lies off the scale it would be
    scored on (`outcome_scale`): such an answer is not scored."""
    answers: dict[str, str | float] = {f"survey.{k}": v for k, v in outcome.survey.items()}
    if outcome.rating is not None:
        answers["rating"] = outcome.rating
    for path, answer in answers.items():
        low, high = outcome_scale(outcome, path.removeprefix("survey."))
        if isinstance(answer, int | float) and not low <= answer <= high:
            yield path, float(answer), (low, high)
