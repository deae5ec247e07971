"""The response task: pairwise in both orders, rubric, the ensemble, and judge failures."""

from __future__ import annotations

import json

import pytest
from task_harness import ScriptedCaller, conversation, two_reply_turn

from attunebench.data.schema import Conversation, State
from attunebench.judge.catalog import pairwise_prompt, rubric_prompt
from attunebench.models.base import Message, ProviderError
from attunebench.models.hints import TaskHint
from attunebench.models.mock import MockProvider
from attunebench.tasks import TASKS, PlanError, evaluated_models
from attunebench.tasks.base import Item

REPLY = "MODEL REPLY: that sounds exhausting; what would help tonight?"
CHOSEN, REJECTED = "That sounds so hard. I'm listening.", "Just go to bed earlier."


def data() -> list[Conversation]:
    return [conversation([
        two_reply_turn(0, "I can't switch off at night.", texts=(CHOSEN, REJECTED),
                       state=State(primary="anxiety", intensity=4),
                       wanted="To be heard, not fixed."),
        two_reply_turn(1, "Ok.", tie=True),  # no pick: not a response item
    ])]  # fmt: skip


def subject(messages: list[Message], hint: TaskHint | None) -> str:
    return REPLY


def prefers_model(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None
    if hint.kind == "judge_rubric":
        return '{"score": 8, "reason": "close to what they wanted"}'
    winner = "A" if "MODEL REPLY" in hint.candidates["A"] else "B"
    return json.dumps({"winner": winner, "reason": "fits"})


def says_a(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None
    if hint.kind == "judge_rubric":
        return '```json\n{"score": 5}\n```'
    return '{"winner": "A"}'


def setup(**judges: object) -> tuple[Item, ScriptedCaller]:
    items = list(TASKS.get("response")().items(data()))
    assert [(i.turn_index, i.item_id) for i in items] == [(0, "reply")]
    providers = {"mock/s": MockProvider("s", outputs=subject)}
    providers.update({name: MockProvider(name, outputs=fn) for name, fn in judges.items()})  # type: ignore[arg-type]
    return items[0], ScriptedCaller(providers)  # type: ignore[arg-type]


async def test_pairwise_rubric_and_ensemble_equal_hand_computed_values() -> None:
    item, caller = setup(**{"mock/j1": prefers_model, "mock/j2": says_a})
    task = TASKS.get("response")()
    record = await task.evaluate(item, "mock/s", caller, ["mock/j1", "mock/j2"])
    assert record.status == "ok" and record.prediction == {"reply": REPLY}
    assert record.scores == pytest.approx({
        "win_vs_chosen[mock/j1]": 1.0, "win_vs_rejected[mock/j1]": 1.0, "rubric[mock/j1]": 8.0,
        # always "A": a win when the model's reply is shown first, a loss when second
        "win_vs_chosen[mock/j2]": 0.5, "win_vs_rejected[mock/j2]": 0.5, "rubric[mock/j2]": 5.0,
        "win_vs_chosen": 0.75, "win_vs_rejected": 0.75, "rubric": 6.5,
    })  # fmt: skip
    assert record.score == pytest.approx(0.75)
    assert record.gold == {"chosen": "a", "rejected": "b"}
    assert record.meta["judges"] == ["mock/j1", "mock/j2"]
    assert (record.meta["verdicts_invalid"], record.meta["verdicts_failed"]) == (0, 0)
    assert len(record.verdicts) == 10
    orders = [v.order for v in record.verdicts if v.judge == "mock/j1"]
    assert orders == [
        "vs_chosen/model-first", "vs_chosen/reference-first",
        "vs_rejected/model-first", "vs_rejected/reference-first", "rubric",
    ]  # fmt: skip
    verdict = record.verdicts[0]
    assert (verdict.prompt_id, verdict.prompt_version) == (
        "judge-pairwise", pairwise_prompt().info.version
    )
    assert verdict.mode == "pairwise" and verdict.parsed == {"winner": "A", "reason": "fits"}
    assert REPLY in verdict.rendered_prompt and verdict.raw_output.startswith("{")
    assert all(c.role == "judge" for c in caller.calls if c.model != "mock/s")


async def test_unparseable_verdicts_are_excluded_and_counted() -> None:
    outputs = ['{"winner": "A"}', "no idea", '{"winner": "B"}', '{"winner": "tie"}',
               '{"score": 11}']  # fmt: skip
    item, caller = setup(**{"mock/j": outputs})
    record = await TASKS.get("response")().evaluate(item, "mock/s", caller, ["mock/j"])
    # vs chosen: model-first "A" -> 1, reference-first invalid -> excluded: 1.0
    # vs rejected: model-first "B" -> 0, reference-first tie -> 0.5: 0.25; rubric out of range
    assert record.scores["win_vs_chosen"] == 1.0
    assert record.scores["win_vs_rejected"] == 0.25
    assert record.scores["rubric"] is None
    assert record.score == pytest.approx(0.625)
    assert record.meta["verdicts_invalid"] == 2
    assert [v.status for v in record.verdicts] == ["ok", "invalid", "ok", "ok", "invalid"]


async def test_no_usable_verdict_is_not_the_models_fault() -> None:
    item, caller = setup(**{"mock/j": ["garbage"]})
    record = await TASKS.get("response")().evaluate(item, "mock/s", caller, ["mock/j"])
    assert record.status == "ok" and record.score is None and record.meta["judge_unusable"]
    down = [ProviderError("judge down", retryable=True)] * 5
    item, caller = setup(**{"mock/j": ["unused"]})
    caller.providers["mock/j"] = MockProvider("j", failures=down)
    record = await TASKS.get("response")().evaluate(item, "mock/s", caller, ["mock/j"])
    assert record.status == "failed" and "judge down" in (record.error or "")


async def test_one_failed_judge_call_leaves_the_item_unscored() -> None:
    # Five judge calls (4 pairwise, 1 rubric); the third fails for good, the rest answer.
    down = ProviderError("judge down", retryable=False)
    item, caller = setup(**{"mock/j": ["unused"]})
    answers = ['{"winner": "A"}', '{"winner": "B"}', '{"winner": "tie"}', '{"score": 7}']
    caller.providers["mock/j"] = MockProvider("j", outputs=answers, failures=[None, None, down])
    record = await TASKS.get("response")().evaluate(item, "mock/s", caller, ["mock/j"])
    assert record.status == "failed" and record.score is None
    assert record.meta["verdicts_failed"] == 1 and "judge down" in (record.error or "")


async def test_an_empty_reply_is_invalid_and_not_judged() -> None:
    item, caller = setup(**{"mock/j": prefers_model})
    caller.providers["mock/s"] = MockProvider("s", outputs=["   "])
    record = await TASKS.get("response")().evaluate(item, "mock/s", caller, ["mock/j"])
    assert record.status == "invalid" and record.score == 0.0 and record.raw_output == "   "
    assert caller.of("mock/j") == []


async def test_rubric_mode_scores_the_rubric_rescaled() -> None:
    item, caller = setup(**{"mock/j": prefers_model})
    task = TASKS.get("response")(judge_mode="rubric")
    record = await task.evaluate(item, "mock/s", caller, ["mock/j"])
    assert record.scores == {"rubric[mock/j]": 8.0, "rubric": 8.0}
    assert record.score == pytest.approx(7 / 9)
    assert [p.id for p in task.prompts] == ["response", "judge-rubric"]


async def test_the_response_task_needs_a_judge() -> None:
    task = TASKS.get("response")()
    assert task.needs_judge
    with pytest.raises(PlanError, match="needs at least one judge"):
        evaluated_models(task, ["mock/s"], [])
    assert evaluated_models(task, ["mock/s"], ["mock/j"]) == ["mock/s"]
    item, caller = setup()
    with pytest.raises(PlanError):
        await task.evaluate(item, "mock/s", caller, [])
    with pytest.raises(ValueError, match="judge_mode"):
        TASKS.get("response")(judge_mode="vibes")


async def test_what_the_judge_is_told_about_the_participant() -> None:
    item, caller = setup(**{"mock/j": prefers_model})
    await TASKS.get("response")().evaluate(item, "mock/s", caller, ["mock/j"])
    judged = caller.of("mock/j")
    pairwise = judged[0].messages[-1].content
    rubric = judged[-1].messages[-1].content
    for prompt in (pairwise, rubric):
        assert "To be heard, not fixed." in prompt and "felt anxiety" in prompt
    # pairwise: the opponent is a reference reply, so no reference is shown beside it
    assert "<preferred_reply>" not in pairwise and "<rejected_reply>" not in pairwise
    assert f"<preferred_reply>\n{CHOSEN}\n</preferred_reply>" in rubric
    assert f"<rejected_reply>\n{REJECTED}\n</rejected_reply>" in rubric
    assert judged[0].hint is not None
    assert judged[0].hint.reference == {"wanted": "To be heard, not fixed."}
    assert judged[-1].hint is not None and judged[-1].hint.reference["chosen"] == CHOSEN
    assert judged[-1].prompt == rubric_prompt().info


async def test_the_reply_is_written_from_the_conversation_as_chat_messages() -> None:
    _, caller = setup(**{"mock/j": prefers_model})
    task = TASKS.get("response")(context="informed")
    (item,) = task.items(data())
    assert item.variant == "informed"
    await task.evaluate(item, "mock/s", caller, ["mock/j"])
    call = caller.of("mock/s")[0]
    assert [m.role for m in call.messages] == ["system", "user"]
    said, note = call.messages[-1].content.split("\n\n", 1)
    assert said == "I can't switch off at night."  # the self-reports follow what they said
    assert note.startswith("Earlier in this conversation") and note.endswith("</self_reports>")
    assert "</self_reports>" not in call.messages[0].content  # the system message is fixed
    assert call.hint is not None and call.hint.kind == "response"
