"""The preference task: both orders, the scoring rule, ties, invalid and failed answers, and
prompts that never name a turn."""

from __future__ import annotations

import re

import pytest
from task_harness import (
    Harness,
    all_prompts,
    conversation,
    make_task,
    rated_turn,
    two_reply_turn,
    views,
)

from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation, Preference, Response, Turn
from attunebench.models.base import Message, ProviderError
from attunebench.models.mock import MockProvider
from attunebench.records import ItemRecord
from attunebench.tasks.helpers.metrics import METRICS

GOOD, BAD = "A warm and good reply.", "A cold reply."
TURN_NUMBER = re.compile(r"\bturns?\s*(?:#|no\.?|number)?\s*\d", re.IGNORECASE)


def picks() -> Conversation:
    three = Turn(
        index=3,
        user="And now?",
        continued="b",
        responses=(
            Response(id="a", text=BAD),
            Response(id="b", text="Another cold one."),
            Response(id="c", text=GOOD),
        ),
        preference=Preference(chosen="c"),
    )
    return conversation(
        [
            two_reply_turn(0, "Hello.", texts=(GOOD, BAD), chosen="a"),
            two_reply_turn(1, "Still sad.", texts=(BAD, GOOD), chosen="b"),
            two_reply_turn(2, "Meh.", texts=("Equal one.", "Equal two."), tie=True),
            three,
        ]
    )


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
    task = make_task("preference", **options)
    harness = Harness.scripted(m=responder)  # type: ignore[arg-type]
    return await harness.evaluate_all(task, task.items(data), "m")


def test_pairs_chosen_with_each_other_reply_and_ties_pair_all() -> None:
    items = list(make_task("preference").items([picks()]))
    assert [(i.turn_index, i.item_id) for i in items] == [
        (0, "a~b"),
        (1, "a~b"),
        (2, "a~b"),
        (3, "a~c"),
        (3, "b~c"),
    ]
    assert [i.gold.key for i in items] == ["a", "b", "tie", "c", "c"]
    assert not any(i.gold.derived or i.gold.across_turns for i in items)


async def test_a_consistent_correct_answer_scores_one() -> None:
    records = await evaluate(prefers_good, [picks()])
    by_turn = {(r.turn_index, r.item_id): r for r in records}
    first = by_turn[0, "a~b"]
    assert first.status == "ok" and first.score == 1.0
    assert first.scores == {"correct_ab": 1.0, "correct_ba": 1.0, "consistent": 1.0}
    assert first.prediction == {
        "ab": "a",
        "ba": "a",
        "ab_letter": "A",
        "ba_letter": "B",
        "probabilities": {},
    }
    assert first.gold is not None and (first.gold["chosen"], first.gold["tie"]) == ("a", False)
    assert by_turn[1, "a~b"].score == 1.0
    assert by_turn[3, "b~c"].score == 1.0
    # a gold tie is matched only by "tie": here both orders said tie
    assert by_turn[2, "a~b"].score == 1.0 and by_turn[2, "a~b"].gold["tie"] is True  # type: ignore[index]


async def test_a_position_driven_answer_scores_half_and_is_inconsistent() -> None:
    task = make_task("preference")
    records = await evaluate(['{"choice": "A"}'], [picks()])
    scores = {(r.turn_index, r.item_id): (r.score, r.scores["consistent"]) for r in records}
    assert scores == {
        (0, "a~b"): (0.5, 0.0),
        (1, "a~b"): (0.5, 0.0),
        (2, "a~b"): (0.0, 0.0),  # gold tie, never answered tie
        (3, "a~c"): (0.5, 0.0),
        (3, "b~c"): (0.5, 0.0),
    }
    found = views(task, records)
    assert METRICS.get("preference.score").value(found) == pytest.approx(2.0 / 5)
    assert METRICS.get("preference.consistency").value(found) == 0.0
    assert METRICS.get("preference.flip_rate").value(found) == 1.0
    assert METRICS.get("preference.first_shown_share").value(found) == 1.0
    assert METRICS.get("preference.first_shown_probability").value(found) is None  # generated


async def test_a_consistent_wrong_answer_scores_zero() -> None:
    def prefers_cold(messages: list[Message], hint: TaskHint | None) -> str:
        assert hint is not None
        return '{"choice": "A"}' if "cold" in hint.candidates["A"] else '{"choice": "B"}'

    first = (await evaluate(prefers_cold, [picks()]))[0]
    assert (first.score, first.scores) == (
        0.0,
        {"correct_ab": 0.0, "correct_ba": 0.0, "consistent": 1.0},
    )


async def test_an_unparseable_order_makes_the_record_invalid_and_keeps_the_other() -> None:
    task = make_task("preference")
    records = await evaluate(['{"choice": "A"}', "I cannot decide."], [picks()])
    first = records[0]
    assert first.status == "invalid" and first.score == 0.0
    assert first.scores == {"correct_ab": 1.0, "correct_ba": None, "consistent": None}
    assert first.prediction is not None and first.prediction["ab"] == "a"
    assert first.prediction["ba"] is None
    raw = first.raw_output or ""
    assert "--- ab ---" in raw and "I cannot decide." in raw
    found = views(task, records)
    assert METRICS.get("preference.score").value(found) == 0.0
    assert METRICS.get("preference.consistency").value(found) is None  # nothing parsed whole


async def test_a_failed_order_makes_the_record_failed() -> None:
    task = make_task("preference")
    item = next(iter(task.items([picks()])))
    harness = Harness(
        {"m": MockProvider("m", failures=[None, ProviderError("boom", retryable=False)])}
    )
    record = await harness.evaluate(task, item, "m")
    assert record.status == "failed" and record.score is None
    assert "ba: " in (record.error or "") and "boom" in (record.error or "")
    assert record.permanent


# Prompts --------------------------------------------------------------------------------------


def rated() -> Conversation:
    def single(index: int, rating: float) -> Turn:
        reply = Response(id="a", text=f"Reply at turn {index}.", rating=rating)
        return Turn(index=index, user=f"Message {index}.", responses=(reply,), continued="a")

    same_turn = Turn(
        index=3,
        user="Message 3.",
        continued="a",
        responses=(
            Response(id="a", text="Low.", rating=1),
            Response(id="b", text="High.", rating=3),
        ),
    )
    return conversation([single(0, 5), single(1, 2), single(2, 4), same_turn])


def check_prompts(items: list, mode_task: str = "preference") -> int:  # type: ignore[type-arg]
    """Every query of every item, in both answer modes: no turn number anywhere, and the
    prompt that fits the pair. Returns how many prompts were read."""
    task = make_task(mode_task, **({"context": "both"} if mode_task == "preference" else {}))
    read = 0
    for item in items:
        across = item.gold.across_turns
        for mode in ("generate", "choice"):
            for query in task.queries(item, mode):
                for prompt in all_prompts(query):
                    # what the data itself says may name a turn; the prompt's own words may not
                    own = prompt
                    for text in quoted_texts(item):
                        own = own.replace(text, "")
                    assert not TURN_NUMBER.search(own), (item.key, TURN_NUMBER.search(own))
                    read += 1
                if mode_task == "preference":
                    expected = "preference-across-turns" if across else "preference"
                    assert query.prompt.id == expected, item.key
    return read


def quoted_texts(item: object) -> list[str]:
    conv = item.conversation  # type: ignore[attr-defined]
    texts = [t.user.strip() for t in conv.turns] + [
        r.text.strip() for t in conv.turns for r in t.responses
    ]
    return sorted((t for t in texts if t), key=len, reverse=True)


def test_across_turn_pairs_use_their_own_prompt_which_names_no_turn() -> None:
    task = make_task("preference", context="both")
    items = list(task.items([rated(), picks()]))
    assert {i.gold.across_turns for i in items} == {True, False}
    assert check_prompts(items) > 0
    # the check bites: the replies of `rated` say "turn N" and are stripped before it
    item = next(i for i in items if i.gold.across_turns)
    prompt = task.queries(item, "generate")[0].messages[-1].content
    assert TURN_NUMBER.search(prompt) and "Reply at turn" in prompt


def test_no_preference_prompt_of_the_sample_names_a_turn(sample: list[Conversation]) -> None:
    items = list(make_task("preference", context="both").items(sample))
    assert len(items) > 20
    assert check_prompts(items) >= 4 * len(items)
    audit = list(make_task("judge_audit").items(sample))
    assert check_prompts(audit, "judge_audit") >= 4 * len(audit)


def test_no_preference_prompt_of_esconv_names_a_turn(
    esconv: dict[tuple[str, str], list[Conversation]],
) -> None:
    for key in (("failed", "all"), ("multiesc", "test")):
        items = list(make_task("preference", context="both").items(esconv[key][:60]))
        assert any(i.gold.across_turns for i in items), key
        assert check_prompts(items) >= 4 * len(items)


def test_an_across_turn_prompt_quotes_neither_reply_in_its_transcript() -> None:
    # the earlier reply inside the transcript, and the later one answering its last line,
    # would show which came first and how far apart they were
    conv = conversation(
        [rated_turn(i, r, user=f"User line {i}.") for i, r in enumerate([1, 4, 2, 5, 3, 1])]
    )
    task = make_task("preference", context="both")
    items = [i for i in task.items([conv]) if i.gold.across_turns]
    assert items
    for item in items:
        early, late = sorted((item.gold.first_turn, item.gold.second_turn))
        for mode in ("generate", "choice"):
            for query in task.queries(item, mode):
                for prompt in all_prompts(query):
                    shown = prompt.split("<conversation>")[-1].split("</conversation>")[0]
                    assert f"User line {early}." in shown  # up to the earlier reply's message
                    for later in range(early + 1, late + 1):
                        assert f"User line {later}." not in prompt
                    for turn in (early, late):
                        reply = f"The reply to message {turn}."
                        assert reply not in shown and prompt.count(reply) == 1
                    assert "rated" in prompt and "never compared" in query.messages[0].content
                assert query.hint is not None and query.hint.text == f"User line {early}."
