"""The judge audit task: the judge on the participants' own pairs, in both orders."""

from __future__ import annotations

import pytest
from task_harness import ScriptedCaller, conversation, two_reply_turn

from attunebench.data.schema import Conversation, Response, State, Turn
from attunebench.models.base import Message
from attunebench.models.hints import TaskHint
from attunebench.models.mock import MockProvider
from attunebench.tasks import TASKS, PlanError, evaluated_models

SHORT, LONG = "I hear you.", "That sounds really painful, and it makes sense you feel this way."


def data() -> list[Conversation]:
    rated = Turn(index=2, user="Later.", continued="a", responses=(
        Response(id="a", text="Rated low.", rating=1),
        Response(id="b", text="Rated high.", rating=4),
    ))  # fmt: skip
    across = [
        Turn(index=3, user="Even later.", continued="a",
             responses=(Response(id="a", text="Across one.", rating=5),)),
        Turn(index=4, user="Last.", continued="a",
             responses=(Response(id="a", text="Across two.", rating=2),)),
    ]  # fmt: skip
    return [conversation([
        two_reply_turn(0, "My cat is ill.", texts=(SHORT, LONG), chosen="a",
                       state=State(primary="fear"), wanted="Short and kind."),
        two_reply_turn(1, "Thanks.", texts=(LONG, SHORT), chosen="a"),
        rated, *across,
    ])]  # fmt: skip


def longer_wins(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None and hint.kind == "judge_pairwise"
    a, b = hint.candidates["A"], hint.candidates["B"]
    return '{"winner": "A"}' if len(a) > len(b) else '{"winner": "B"}'


def test_the_audit_runs_on_judges_and_skips_pairs_across_turns() -> None:
    task = TASKS.get("judge_audit")()
    items = list(task.items(data()))
    assert [(i.turn_index, i.item_id, i.variant) for i in items] == [
        (0, "a~b", ""), (1, "a~b", ""), (2, "a~b", ""),
    ]
    assert evaluated_models(task, ["mock/subject"], ["mock/judge"]) == ["mock/judge"]
    with pytest.raises(PlanError):
        evaluated_models(task, ["mock/subject"], [])


async def test_records_score_a_consistent_agreeing_judge_and_carry_lengths() -> None:
    task = TASKS.get("judge_audit")()
    caller = ScriptedCaller.scripted(**{"mock/judge": longer_wins})
    records = [await task.evaluate(i, "mock/judge", caller, ["mock/judge"])
               for i in task.items(data())]  # fmt: skip
    first, second, third = records
    # turn 0: the participant chose the short reply; the judge always the long one
    assert first.prediction == {"ab": "b", "ba": "b", "ab_letter": "B", "ba_letter": "A"}
    assert (first.score, first.scores) == (0.0, {"agree_ab": 0.0, "agree_ba": 0.0,
                                                 "consistent": 1.0})  # fmt: skip
    assert first.meta == {"derived": False, "across_turns": False, "first": "a", "second": "b",
                          "len_a": len(SHORT), "len_b": len(LONG), "longer": "B"}  # fmt: skip
    assert first.gold == {"chosen": "a", "tie": False}
    assert second.score == 1.0 and second.meta["longer"] == "A"
    assert third.meta["derived"] is True and third.gold == {"chosen": "b", "tie": False}
    assert [v.order for v in first.verdicts] == ["ab", "ba"]
    assert all(c.role == "judge" for c in caller.calls)


async def test_the_judge_never_sees_the_pick_or_the_candidates_as_references() -> None:
    task = TASKS.get("judge_audit")()
    caller = ScriptedCaller.scripted(**{"mock/judge": longer_wins})
    item = next(iter(task.items(data())))
    await task.evaluate(item, "mock/judge", caller, ["mock/judge"])
    prompt = caller.calls[0].messages[-1].content
    assert "Short and kind." in prompt and "felt fear" in prompt
    assert "preferred_reply" not in prompt and "rejected_reply" not in prompt
    assert caller.calls[0].hint is not None
    assert caller.calls[0].hint.reference == {"wanted": "Short and kind."}
    bare = TASKS.get("judge_audit")(participant_context=False)
    caller = ScriptedCaller.scripted(**{"mock/judge": longer_wins})
    await bare.evaluate(item, "mock/judge", caller, ["mock/judge"])
    assert "Short and kind." not in caller.calls[0].messages[-1].content


async def test_an_unparseable_verdict_makes_the_record_invalid() -> None:
    task = TASKS.get("judge_audit")()
    caller = ScriptedCaller({"mock/judge": MockProvider("judge", outputs=['{"winner": "A"}', "?"])})
    record = await task.evaluate(next(iter(task.items(data()))), "mock/judge", caller, [])
    assert record.status == "invalid" and record.score == 0.0
    assert record.scores == {"agree_ab": 1.0, "agree_ba": None, "consistent": None}
    assert [v.status for v in record.verdicts] == ["ok", "invalid"]
