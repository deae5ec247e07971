"""The preference task: both orders, the scoring rule, ties, invalid answers, derived pairs."""

from __future__ import annotations

import pytest
from task_harness import ScriptedCaller, conversation, two_reply_turn

from attunebench.data.schema import Conversation, Preference, Response, Turn
from attunebench.models.base import Message, ProviderError
from attunebench.models.hints import TaskHint
from attunebench.models.mock import MockProvider
from attunebench.records import ItemRecord
from attunebench.tasks import TASKS
from attunebench.tasks.metrics import METRICS

GOOD, BAD = "A warm and good reply.", "A cold reply."


def picks() -> Conversation:
    three = Turn(
        index=3, user="And now?", continued="b",
        responses=(Response(id="a", text=BAD), Response(id="b", text="Another cold one."),
                   Response(id="c", text=GOOD)),
        preference=Preference(chosen="c"),
    )  # fmt: skip
    return conversation([
        two_reply_turn(0, "Hello.", texts=(GOOD, BAD), chosen="a"),
        two_reply_turn(1, "Still sad.", texts=(BAD, GOOD), chosen="b"),
        two_reply_turn(2, "Meh.", texts=("Equal one.", "Equal two."), tie=True),
        three,
    ])  # fmt: skip


def prefers_good(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None
    if "good" in hint.candidates["A"]:
        return '{"choice": "A"}'
    if "good" in hint.candidates["B"]:
        return '{"choice": "B"}'
    return '{"choice": "tie"}'


async def evaluate(
    responder: object, data: list[Conversation], **options: object
) -> list[ItemRecord]:
    task = TASKS.get("preference")(**options)
    provider = MockProvider("m", outputs=responder)  # type: ignore[arg-type]
    caller = ScriptedCaller({"mock/m": provider})
    return [await task.evaluate(i, "mock/m", caller, []) for i in task.items(data)]


def test_pairs_chosen_with_each_other_reply_and_ties_pair_all() -> None:
    items = list(TASKS.get("preference")().items([picks()]))
    assert [(i.turn_index, i.item_id) for i in items] == [
        (0, "a~b"), (1, "a~b"), (2, "a~b"), (3, "a~c"), (3, "b~c"),
    ]


async def test_a_consistent_correct_answer_scores_one() -> None:
    records = await evaluate(prefers_good, [picks()])
    by_turn = {(r.turn_index, r.item_id): r for r in records}
    first = by_turn[0, "a~b"]
    assert first.status == "ok" and first.score == 1.0
    assert first.scores == {"correct_ab": 1.0, "correct_ba": 1.0, "consistent": 1.0}
    assert first.prediction == {"ab": "a", "ba": "a", "ab_letter": "A", "ba_letter": "B"}
    assert first.gold == {"chosen": "a", "tie": False}
    assert by_turn[1, "a~b"].score == 1.0
    assert by_turn[3, "b~c"].score == 1.0
    # a gold tie is matched only by "tie": here both orders said tie
    assert by_turn[2, "a~b"].score == 1.0 and by_turn[2, "a~b"].gold["tie"] is True
    assert by_turn[0, "a~b"].meta["longer"] == "A"


async def test_a_position_driven_answer_scores_half_and_is_inconsistent() -> None:
    records = await evaluate(['{"choice": "A"}'], [picks()])
    scores = {(r.turn_index, r.item_id): (r.score, r.scores["consistent"]) for r in records}
    assert scores == {
        (0, "a~b"): (0.5, 0.0), (1, "a~b"): (0.5, 0.0),
        (2, "a~b"): (0.0, 0.0),  # gold tie, never answered tie
        (3, "a~c"): (0.5, 0.0), (3, "b~c"): (0.5, 0.0),
    }  # fmt: skip
    assert METRICS.get("preference.accuracy")(records) == pytest.approx(2.0 / 5)
    assert METRICS.get("preference.consistency")(records) == 0.0
    assert METRICS.get("preference.flip_rate")(records) == 1.0


async def test_a_consistent_wrong_answer_scores_zero() -> None:
    def prefers_cold(messages: list[Message], hint: TaskHint | None) -> str:
        assert hint is not None
        return '{"choice": "A"}' if "cold" in hint.candidates["A"] else '{"choice": "B"}'

    records = await evaluate(prefers_cold, [picks()])
    first = records[0]
    assert (first.score, first.scores) == (0.0, {"correct_ab": 0.0, "correct_ba": 0.0,
                                                 "consistent": 1.0})  # fmt: skip


async def test_an_unparseable_order_makes_the_record_invalid() -> None:
    records = await evaluate(['{"choice": "A"}', "I cannot decide."], [picks()])
    first = records[0]
    assert first.status == "invalid" and first.score == 0.0
    assert first.scores == {"correct_ab": 1.0, "correct_ba": None, "consistent": None}
    raw = first.raw_output or ""
    assert "--- ab ---" in raw and "I cannot decide." in raw
    assert METRICS.get("preference.accuracy")(records) == 0.0


async def test_a_failed_order_makes_the_record_failed() -> None:
    task = TASKS.get("preference")()
    item = next(iter(task.items([picks()])))
    provider = MockProvider("m", failures=[None, ProviderError("boom", retryable=False)])
    record = await task.evaluate(item, "mock/m", ScriptedCaller({"mock/m": provider}), [])
    assert record.status == "failed" and record.score is None and "ba: boom" in (record.error or "")


def rated() -> Conversation:
    def single(index: int, rating: float) -> Turn:
        reply = Response(id="a", text=f"Reply at turn {index}.", rating=rating)
        return Turn(index=index, user=f"Message {index}.", responses=(reply,), continued="a")

    same_turn = Turn(
        index=3, user="Message 3.", continued="a",
        responses=(
            Response(id="a", text="Low.", rating=1), Response(id="b", text="High.", rating=3)
        ),
    )  # fmt: skip
    return conversation([single(0, 5), single(1, 2), single(2, 4), same_turn])


def test_pairs_derived_from_ratings_keep_the_widest_gaps_up_to_the_cap() -> None:
    task = TASKS.get("preference")()
    items = list(task.items([rated()]))
    assert [(i.turn_index, i.item_id) for i in items] == [
        (3, "0:a~3:a"), (1, "0:a~1:a"), (3, "2:a~3:a"), (3, "a~b"),
    ]
    assert len(list(TASKS.get("preference")(max_derived_pairs=1).items([rated()]))) == 1
    assert list(TASKS.get("preference")(derive_from_ratings=False).items([rated()])) == []


async def test_derived_pairs_say_so_and_pairs_across_turns_use_their_own_prompt() -> None:
    task = TASKS.get("preference")()
    caller = ScriptedCaller({"mock/m": MockProvider("m", outputs=['{"choice": "A"}'])})
    records = [await task.evaluate(i, "mock/m", caller, []) for i in task.items([rated()])]
    assert all(r.meta["derived"] for r in records)
    assert [r.meta["across_turns"] for r in records] == [True, True, True, False]
    assert records[0].gold == {"chosen": "0:a", "tie": False}
    assert records[3].gold == {"chosen": "b", "tie": False}
    prompts = [c.prompt.id for c in caller.calls]
    assert prompts == ["preference-across-turns"] * 6 + ["preference"] * 2
    across = caller.calls[0].messages[-1].content
    assert "answering the user's message in turn 1" in across
    assert "answering the user's message in turn 4" in across
