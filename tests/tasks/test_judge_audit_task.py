"""The judge audit task: the judge on the participants' own pairs, in both orders."""

from __future__ import annotations

import pytest
from task_harness import Harness, conversation, make_task, two_reply_turn, views

from attunebench.data.schema import Conversation, Response, State, Turn
from attunebench.engine.plan import evaluated_models, without_judge
from attunebench.models.base import Message
from attunebench.models.hints import TaskHint
from attunebench.tasks import PlanError
from attunebench.tasks.metrics import METRICS

SHORT, LONG = "I hear you.", "That sounds really painful, and it makes sense you feel this way."


def data() -> list[Conversation]:
    rated = Turn(
        index=2,
        user="Later.",
        continued="a",
        responses=(
            Response(id="a", text="Rated low.", rating=1),
            Response(id="b", text="Rated high.", rating=4),
        ),
    )
    across = [
        Turn(
            index=3,
            user="Even later.",
            continued="a",
            responses=(Response(id="a", text="Across one.", rating=5),),
        ),
        Turn(
            index=4,
            user="Last.",
            continued="a",
            responses=(Response(id="a", text="Across two.", rating=2),),
        ),
    ]
    return [
        conversation(
            [
                two_reply_turn(
                    0,
                    "My cat is ill.",
                    texts=(SHORT, LONG),
                    chosen="a",
                    state=State(primary="fear"),
                    need="Short and kind.",
                ),
                two_reply_turn(1, "Thanks.", texts=(LONG, SHORT), chosen="a"),
                rated,
                *across,
            ]
        )
    ]


def longer_wins(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None and hint.kind == "judge_pairwise"
    a, b = hint.candidates["A"], hint.candidates["B"]
    return '{"winner": "A"}' if len(a) > len(b) else '{"winner": "B"}'


def test_the_audit_runs_on_judges_and_skips_pairs_across_turns() -> None:
    task = make_task("judge_audit", participant_context="blind")
    items = list(task.items(data()))
    assert [(i.turn_index, i.item_id, i.variant) for i in items] == [
        (0, "a~b", "blind"),
        (1, "a~b", "blind"),
        (2, "a~b", "blind"),
    ]
    both = list(make_task("judge_audit").items(data()))
    assert len(both) == 6 and {i.variant for i in both} == {"informed", "blind"}
    assert evaluated_models(task, ["subject"], ["judge"]) == ["judge"]
    with pytest.raises(PlanError):
        without_judge([task], [], from_all=False)
    assert list(task.references()) == ["reference/longer-reply"]


async def test_records_score_a_consistent_agreeing_judge_and_carry_lengths() -> None:
    task = make_task("judge_audit", participant_context="blind")
    harness = Harness.scripted(judge=longer_wins)
    records = await harness.evaluate_all(task, task.items(data()), "judge", ["judge"])
    first, second, third = records
    # turn 0: the participant chose the short reply; the judge always the long one
    assert first.prediction == {
        "ab": "b",
        "ba": "b",
        "ab_letter": "B",
        "ba_letter": "A",
        "probabilities": {},
    }
    assert (first.score, first.scores) == (
        0.0,
        {"agree_ab": 0.0, "agree_ba": 0.0, "consistent": 1.0},
    )
    gold = first.gold or {}
    assert (gold["first"], gold["second"], gold["chosen"], gold["derived"]) == (
        "a",
        "b",
        "a",
        False,
    )
    assert (gold["len_first"], gold["len_second"]) == (len(SHORT), len(LONG))
    assert second.score == 1.0
    assert third.gold is not None and third.gold["derived"] and third.gold["chosen"] == "b"
    # the audited judge answers as the evaluated model: its raw verdicts are the record's output
    assert [c.query.key for c in harness.calls[:2]] == ["ab", "ba"]
    assert "--- ab ---" in (first.raw_output or "") and "--- ba ---" in (first.raw_output or "")
    assert all(c.role == "judge" for c in harness.calls)
    found = views(task, records)
    # right where the participant chose the longer reply (turn 1, and turn 2 by one character)
    assert METRICS.get("judge_audit.score").value(found) == pytest.approx(2 / 3)
    # always the longer: a consistent judge, whose picks all go to the longer reply
    assert METRICS.get("judge_audit.flip_rate").value(found) == 0.0
    assert METRICS.get("judge_audit.longer_win_share").value(found) == 1.0


async def test_the_judge_never_sees_the_pick_or_the_candidates_as_references() -> None:
    task = make_task("judge_audit")
    harness = Harness.scripted(judge=longer_wins)
    items = {i.variant: i for i in task.items(data()) if i.turn_index == 0}
    await harness.evaluate(task, items["informed"], "judge", ["judge"])
    query = harness.calls[0].query
    prompt = query.messages[-1].content
    assert "Short and kind." in prompt and "felt fear" in prompt
    assert "preferred_reply" not in prompt and "rejected_reply" not in prompt
    assert "chose" not in prompt and "preferred" not in prompt.split("</participant>")[0]
    assert query.hint is not None and query.hint.reference == {"wanted": "Short and kind."}
    blind = task.queries(items["blind"], "generate")[0].messages[-1].content
    assert "Short and kind." not in blind and "felt fear" not in blind


async def test_an_unparseable_verdict_makes_the_record_invalid() -> None:
    task = make_task("judge_audit", participant_context="blind")
    harness = Harness.scripted(judge=['{"winner": "A"}', "?"])
    record = await harness.evaluate(task, next(iter(task.items(data()))), "judge", [])
    assert record.status == "invalid" and record.score == 0.0
    assert record.scores == {"agree_ab": 1.0, "agree_ba": None, "consistent": None}
    assert record.prediction is not None and record.prediction["ab"] == "a"
