"""The judge audit task: the judge on the participants' own pairs, in both orders."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from task_harness import Harness, conversation, make_task, two_reply_turn, views

from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation, Response, State, Turn
from attunebench.engine.plan import evaluated_models, without_judge
from attunebench.models.base import Message
from attunebench.tasks import PlanError
from attunebench.tasks.helpers.metrics import METRICS

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
    assert list(task.scoring.references()) == ["reference/longer-reply"]


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


LIKED, DISLIKED = "Glad you asked, the tower is in Paris.", "No."


def bot_chat(partner: str | None = "model") -> Conversation:
    """A ConvAI1-like human-bot chat: one bot reply per message, each with the person's thumb
    (liked and disliked alternating)."""
    turns = [
        Turn(
            index=i,
            user=f"Message {i}?",
            responses=(
                Response(
                    id="partner",
                    text=LIKED if i % 2 == 0 else DISLIKED,
                    rating=1.0 if i % 2 == 0 else 0.0,
                    model="convai1-bot",
                ),
            ),
        )
        for i in range(8)
    ]
    labels = {} if partner is None else {"partner": partner}
    return conversation(turns, cid="bot-chat", labels=labels)


def knows_the_thumbs(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None
    return '{"winner": "A"}' if hint.candidates["A"] == LIKED else '{"winner": "B"}'


def always_a(messages: list[Message], hint: TaskHint | None) -> str:
    return '{"winner": "A"}'


def test_a_chat_with_a_model_is_audited_on_liked_and_disliked_replies_across_turns() -> None:
    task = make_task("judge_audit", participant_context="blind")
    items = list(task.items([bot_chat()]))
    assert len(items) == 4
    golds = [i.gold for i in items]
    assert all(g.across_turns and g.derived and g.gap == 1.0 for g in golds)
    assert all(g.first_model == g.second_model == "convai1-bot" for g in golds)
    # the liked reply is the gold, and it came earlier in as many pairs as it came later
    liked_first = [g.chosen == g.first for g in golds]
    assert sum(liked_first) == 2
    assert all(":" in i.item_id and "~" in i.item_id for i in items)
    # a chat between people, or with no partner label (ESConv, MultiESC): same turns only
    assert list(task.items([bot_chat("person")])) == []
    assert list(task.items([bot_chat(None)])) == []


def test_an_across_turn_pair_is_asked_in_both_orders_before_the_earlier_reply() -> None:
    task = make_task("judge_audit", participant_context="blind")
    item = next(iter(task.items([bot_chat()])))
    queries = task.queries(item, "generate")
    assert [q.key for q in queries] == ["ab", "ba"]
    ab, ba = (q.hint.candidates if q.hint else {} for q in queries)
    assert (ab["A"], ab["B"]) == (ba["B"], ba["A"]) and {ab["A"], ab["B"]} == {LIKED, DISLIKED}
    early = min(item.gold.first_turn, item.gold.second_turn)
    prompt = queries[0].messages[-1].content
    assert f"Message {early}?" in prompt and f"Message {early + 1}?" not in prompt


@pytest.mark.parametrize(
    ("judge", "score", "flip_rate"), [(knows_the_thumbs, 1.0, 0.0), (always_a, 0.0, 1.0)]
)
async def test_a_judge_run_on_a_bot_chat_recovers_agreement_with_the_thumbs(
    judge: Callable[[list[Message], TaskHint | None], str], score: float, flip_rate: float
) -> None:
    task = make_task("judge_audit", participant_context="blind")
    harness = Harness.scripted(judge=judge)
    records = await harness.evaluate_all(task, task.items([bot_chat()]), "judge", ["judge"])
    assert len(records) == 4 and all(r.status == "ok" for r in records)
    found = views(task, records)
    # planted: a judge that knows the thumbs agrees on every pair; a position-only judge
    # (always the first shown) flips with the order and agrees on none
    assert METRICS.get("judge_audit.score").value(found) == score
    assert METRICS.get("judge_audit.flip_rate").value(found) == flip_rate
    assert METRICS.get("judge_audit.agreement").value(found) == pytest.approx(1.0 if score else 0.5)
