"""The behavior task: per-reply items, per-item F1, and the corpus F1 metrics."""

from __future__ import annotations

import pytest
from task_harness import ScriptedCaller, conversation, two_reply_turn

from attunebench.data.schema import Conversation
from attunebench.models.mock import MockProvider
from attunebench.tasks import TASKS, behavior_label_f1
from attunebench.tasks.metrics import METRICS


def data() -> list[Conversation]:
    return [conversation([
        two_reply_turn(0, "I failed my driving test.",
                       texts=("That must sting. What happened?", "You should practise more."),
                       behaviors=(("reflection", "question"), ("lecturing", "suggestion"))),
        two_reply_turn(1, "Ok.", texts=("Cool.", "Right."), behaviors=(("other",), ())),
    ])]  # fmt: skip


async def test_items_scores_and_corpus_metrics_equal_hand_computed_values() -> None:
    task = TASKS.get("behavior")()
    items = list(task.items(data()))
    assert [(i.turn_index, i.item_id) for i in items] == [(0, "a"), (0, "b"), (1, "a")]
    scripted = {
        items[0].key: '{"behaviors": ["reflection", "Question", "validation"]}',
        items[1].key: '{"behaviors": ["moralizing"]}',  # a listed synonym of lecturing
        items[2].key: '{"behaviors": ["small talk"]}',  # not a label: invalid
    }
    caller = ScriptedCaller({"mock/m": MockProvider("m", outputs=scripted)})
    records = [await task.evaluate(i, "mock/m", caller, []) for i in items]
    # item 1: P={reflection, question, validation}, G={reflection, question}: F1 = 4/5
    assert records[0].score == pytest.approx(0.8)
    # item 2: P={lecturing}, G={lecturing, suggestion}: F1 = 2/3
    assert records[1].score == pytest.approx(2 / 3)
    assert records[1].prediction == {"behaviors": ["lecturing"]}
    assert records[2].status == "invalid" and records[2].score == 0.0
    assert records[2].raw_output == '{"behaviors": ["small talk"]}'
    # micro: TP=3, FP=1 (validation), FN=1 (suggestion) + 1 (other, invalid) -> 6/9
    assert METRICS.get("behavior.micro_f1")(records) == pytest.approx(6 / 9)
    per_label = behavior_label_f1(records)
    assert per_label == pytest.approx({
        "reflection": 1.0, "question": 1.0, "validation": 0.0,
        "lecturing": 1.0, "suggestion": 0.0, "other": 0.0,
    })  # fmt: skip
    assert METRICS.get("behavior.macro_f1")(records) == pytest.approx(3 / 6)


async def test_the_reply_is_quoted_after_the_conversation() -> None:
    task = TASKS.get("behavior")()
    item = next(iter(task.items(data())))
    caller = ScriptedCaller({"mock/m": MockProvider("m")})
    await task.evaluate(item, "mock/m", caller, [])
    prompt = caller.calls[0].messages[-1].content
    assert "<reply>\nThat must sting. What happened?\n</reply>" in prompt
    assert prompt.index("</conversation>") < prompt.index("<reply>\nThat must")
    assert "You should practise more." not in prompt  # the other candidate is not shown
    hint = caller.calls[0].hint
    assert hint is not None and hint.text == "That must sting. What happened?"
    assert hint.history[-1] == ("user", "I failed my driving test.")
