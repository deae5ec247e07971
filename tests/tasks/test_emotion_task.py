"""The emotion task: items, hand-computed scores, invalid and failed answers."""

from __future__ import annotations

import json

import pytest
from task_harness import ScriptedCaller, conversation, two_reply_turn

from attunebench.data.schema import Conversation, State, Turn
from attunebench.models.base import ProviderError
from attunebench.models.mock import MockProvider
from attunebench.tasks import TASKS
from attunebench.tasks.metrics import METRICS


def data() -> list[Conversation]:
    turn_level = conversation([
        two_reply_turn(0, "I can't sleep before the exam.",
                       state=State(primary="anxiety", emotions=("anxiety", "fear"),
                                   intensity=4, valence=-0.5, arousal=0.8)),
        two_reply_turn(1, "Thanks, that helps.", state=State(emotions=("gratitude",))),
        two_reply_turn(2, "Anyway.", state=None),
        two_reply_turn(3, "Still here.", state=State(emotions=("relief", "hope"), intensity=2)),
    ], cid="turns")  # fmt: skip
    conversation_level = conversation(
        [Turn(index=0, user="My dog died."), Turn(index=1, user="I miss him.")],
        cid="labelled", emotion="sadness",
    )
    return [turn_level, conversation_level]


def answers(**by_turn: dict[str, object]) -> dict[str, str]:
    return {key: json.dumps(value) for key, value in by_turn.items()}


def test_items_are_turns_with_gold_and_conversation_labels_at_the_first_turn() -> None:
    items = list(TASKS.get("emotion")().items(data()))
    assert [(i.conversation.id, i.turn_index, i.item_id, i.variant) for i in items] == [
        ("turns", 0, "turn", "blind"), ("turns", 1, "turn", "blind"),
        ("turns", 3, "turn", "blind"), ("labelled", 0, "conversation", "blind"),
    ]  # fmt: skip
    both = list(TASKS.get("emotion")(context="both").items(data()))
    assert len(both) == 8 and {i.variant for i in both} == {"blind", "informed"}
    with pytest.raises(ValueError, match="context must be one of"):
        TASKS.get("emotion")(context="everything")


async def test_scores_equal_hand_computed_values() -> None:
    task = TASKS.get("emotion")()
    items = list(task.items(data()))
    scripted = {
        items[0].key: '```json\n{"primary": "Anxious", "emotions": ["anxiety", "sadness"], '
        '"intensity": 3, "valence": -0.25, "arousal": 0.5}\n```',
        items[1].key: 'Sure. {"primary": "gratitude", "emotions": ["gratitude"]}',
        items[2].key: '{"primary": "hope", "emotions": ["hope"], "intensity": 2}',
        items[3].key: '{"primary": "loneliness"}',
    }
    caller = ScriptedCaller({"mock/m": MockProvider("m", outputs=scripted)})
    records = [await task.evaluate(i, "mock/m", caller, []) for i in items]
    first, second, third, fourth = records
    assert first.status == "ok" and first.score == 1.0
    # P = {anxiety, sadness}, G = {anxiety, fear}: |P∩G| / |P∪G| = 1/3
    assert first.scores["jaccard"] == pytest.approx(1 / 3)
    assert first.scores["intensity_abs_error"] == pytest.approx(1.0)
    assert first.scores["valence_abs_error"] == pytest.approx(0.25)
    assert first.scores["arousal_abs_error"] == pytest.approx(0.3)
    assert first.prediction == {"primary": "anxiety", "emotions": ["anxiety", "sadness"],
                                "intensity": 3.0, "valence": -0.25, "arousal": 0.5}  # fmt: skip
    assert first.gold == {"primary": "anxiety", "emotions": ["anxiety", "fear"],
                          "intensity": 4.0, "valence": -0.5, "arousal": 0.8}  # fmt: skip
    # a single listed emotion is the primary
    assert (second.score, second.scores["jaccard"], second.gold) == (
        1.0, 1.0, {"primary": "gratitude", "emotions": ["gratitude"]}
    )
    assert second.scores["intensity_abs_error"] is None
    # several emotions, no primary: naming any of them counts; Jaccard {hope} vs {relief, hope}
    assert (third.score, third.scores["jaccard"], third.scores["intensity_abs_error"]) == (
        1.0, 0.5, 0.0
    )
    assert fourth.meta == {"gold_level": "conversation"} and fourth.score == 0.0
    assert METRICS.get("emotion.accuracy")(records) == pytest.approx(0.75)


async def test_invalid_answers_count_against_the_model_and_keep_the_raw_output() -> None:
    task = TASKS.get("emotion")()
    item = next(iter(task.items(data())))
    caller = ScriptedCaller({"mock/m": MockProvider("m", outputs=['{"primary": "melancholy"}'])})
    record = await task.evaluate(item, "mock/m", caller, [])
    assert record.status == "invalid" and record.score == 0.0
    assert record.raw_output == '{"primary": "melancholy"}'
    assert "melancholy" in (record.error or "")
    assert record.scores["primary_correct"] == 0.0 and record.scores["intensity_abs_error"] is None


async def test_a_failed_call_is_a_failed_record_and_never_scored() -> None:
    task = TASKS.get("emotion")()
    item = next(iter(task.items(data())))
    failing = MockProvider("m", failures=[ProviderError("server down", retryable=True)])
    record = await task.evaluate(item, "mock/m", ScriptedCaller({"mock/m": failing}), [])
    assert record.status == "failed" and record.score is None and record.scores == {}
    assert record.error == "server down" and record.raw_output is None


async def test_the_prompt_lists_the_labels_with_descriptions_and_asks_for_the_hint_json() -> None:
    task = TASKS.get("emotion")()
    item = next(iter(task.items(data())))
    caller = ScriptedCaller({"mock/m": MockProvider("m")})
    record = await task.evaluate(item, "mock/m", caller, [])
    call = caller.calls[0]
    system = call.messages[0].content  # fixed for the conversation: a shared prefix
    for label in item.taxonomy.emotions:
        assert f"- {label.name}: {label.description}" in system
    assert '"primary"' in system and '"intensity"' in system
    assert "</conversation>" in call.messages[-1].content
    assert call.hint is not None and call.hint.kind == "emotion"
    assert call.hint.labels == tuple(label.name for label in item.taxonomy.emotions)
    assert call.params is not None and call.params.json_mode
    assert record.status == "ok"  # the mock answers the hint in the format the task parses
