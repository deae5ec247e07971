"""A corpus's own outcome fields and scales, and ratings given on replies: the outcome gold is
scored on the scale the data declares (never the replies'), a custom survey answer enters the
headline as the known fields do, a reply's own rating is a rating item where no user message
rated anything, and the prompt names a person as a person."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pytest
from task_harness import Harness, conversation, make_task, rated_turn, views

from attunebench.data.derived import outcome_fields, rated_replies
from attunebench.data.schema import Conversation, Outcome, RatingScale, State, Turn
from attunebench.tasks.base import Output
from attunebench.tasks.helpers.metrics import METRICS

THUMBS = RatingScale(low=0, high=1)


def scored_afterwards(cid: str, turns: int, outcome: Outcome) -> Conversation:
    """A conversation whose replies carry thumbs, and an outcome on scales of its own."""
    said = [rated_turn(i, float(i % 2), user=f"{cid} message {i}.") for i in range(turns)]
    return conversation(said, cid=cid, outcome=outcome, rating_scale=THUMBS)


def test_the_outcome_rating_is_on_its_own_scale_never_the_replies() -> None:
    declared = Outcome(rating=4, scales={"rating": RatingScale(low=1, high=5)})
    values, scales, _ = outcome_fields(scored_afterwards("declared", 3, declared))
    assert (values, scales) == ({"rating": 4.0}, {"rating": (1.0, 5.0)})
    # undeclared, it is taken on 1-5 (not the thumbs' 0-1, where 4 would score below zero)
    values, scales, _ = outcome_fields(scored_afterwards("plain", 3, Outcome(rating=4)))
    assert scales == {"rating": (1.0, 5.0)}
    # off the scale it is taken on: not scored (data validate names it)
    assert outcome_fields(scored_afterwards("off", 3, Outcome(rating=7)))[0] == {}


def test_every_outcome_score_stays_within_its_range() -> None:
    task = make_task("outcome")
    points = {"points": RatingScale(low=10, high=21), "rating": RatingScale(low=1, high=5)}
    outcome = Outcome(rating=5, survey={"points": 21}, scales=points)
    (item,) = task.items([scored_afterwards("c", 3, outcome)])
    assert item.gold.scales == {"rating": (1.0, 5.0), "points": (10.0, 21.0)}
    far = task.parse(item, {"answer": _output({"rating": 1, "points": 10})})
    assert task.score(item, far).score == pytest.approx(0.0)
    exact = task.parse(item, {"answer": _output({"rating": 5, "points": 21})})
    assert task.score(item, exact).score == 1.0
    assert task.worst(item, None).score == pytest.approx(0.0)
    (query,) = task.queries(item, "generate")
    prompt = query.messages[-1].content
    assert "rating (How did the user rate the conversation overall, from 1 to 5?)" in prompt
    assert "points (How did the user answer 'points' afterwards, from 10 to 21?)" in prompt


def _output(answer: dict[str, float]) -> Output:
    return Output(text=json.dumps(answer))


def _points_study(count: int) -> list[Conversation]:
    """Conversations of one length (one position bin), each with a points score (10-21) and a
    final intensity; the two vary independently."""
    rng = np.random.default_rng(7)
    scales = {"points": RatingScale(low=10, high=21)}
    found = []
    for i in range(count):
        outcome = Outcome(
            final_state=State(intensity=int(rng.integers(1, 6))),
            survey={"points": int(rng.integers(10, 22))},
            scales=scales,
        )
        found.append(scored_afterwards(f"p{i}", 4, outcome))
    return found


Answer = Callable[[dict[str, float]], dict[str, float]]


async def _headline(conversations: list[Conversation], answer: Answer) -> float | None:
    """The outcome headline of a model answering each item as `answer` says of its gold."""
    task = make_task("outcome")
    items = list(task.items(conversations))
    scripted = {f"{item.key}|answer": json.dumps(answer(item.gold.values)) for item in items}
    found = views(task, await Harness.scripted(m=scripted).evaluate_all(task, items, "m"))
    return METRICS.get("outcome.mean_adjusted_r").value(found)


async def test_a_custom_survey_field_enters_the_headline_like_the_known_ones() -> None:
    study = _points_study(40)
    # planted: points read exactly, final intensity as a constant -> the mean of 1 and 0
    points_only = await _headline(
        study, lambda gold: {"points": gold["points"], "final_intensity": 3}
    )
    assert points_only == pytest.approx(0.5)
    both = await _headline(
        study, lambda gold: {"points": gold["points"], "final_intensity": gold["final_intensity"]}
    )
    assert both == pytest.approx(1.0)
    # the trap: a constant on every field scores chance, not the corpus's closeness to its mean
    assert await _headline(study, lambda gold: {"points": 15, "final_intensity": 3}) == 0.0


def test_rated_replies_make_items_where_no_user_message_rated() -> None:
    task = make_task("rating")
    thumbs = scored_afterwards("t", 4, Outcome())
    items = list(task.items([thumbs]))
    assert [(i.turn_index, i.item_id, i.gold.rating, i.gold.scale) for i in items] == [
        (t, "reply:a", float(t % 2), (0.0, 1.0)) for t in range(4)
    ]
    (query,) = task.queries(items[2], "generate")
    prompt = query.messages[-1].content
    conversation_block = prompt.split("</conversation>")[0]
    # the conversation up to and including the reply rated, which it ends with
    assert conversation_block.rstrip().endswith("Assistant: The reply to message 2.")
    assert "t message 3." not in prompt
    assert "How did the user rate the assistant's last reply, from 0 (very poor) to 1" in prompt
    assert query.hint is not None and query.hint.text == "The reply to message 2."
    (choice,) = task.queries(items[2], "choice")
    assert choice.choice is not None and choice.choice.keys == ("0", "1")


def test_a_conversation_rated_on_user_messages_counts_each_rating_once() -> None:
    # ConvAI1's and Topical-Chat's way: each thumb on a reply and again as the next message's
    # feedback; only the feedback items are made
    turns = [rated_turn(i, 1.0, user=f"message {i}.") for i in range(3)]
    turns = [t.model_copy(update={"feedback": None if t.index == 0 else 1.0}) for t in turns]
    both = conversation(turns, cid="both", rating_scale=THUMBS)
    assert rated_replies(both) == []
    items = list(make_task("rating").items([both]))
    assert [(i.turn_index, i.item_id) for i in items] == [(1, "feedback"), (2, "feedback")]


def test_the_outcome_prompt_names_a_person_as_a_person() -> None:
    task = make_task("outcome")
    outcome = Outcome(final_state=State(intensity=2))
    turns = [Turn(index=0, user="hi"), rated_turn(1, None, user="bye")]
    for partner, other, speaker in (
        ("person", "another person", "Partner:"),
        ("model", "an assistant", "Assistant:"),
    ):
        chat = conversation(turns, cid=partner, outcome=outcome, labels={"partner": partner})
        (item,) = task.items([chat])
        for mode in ("generate", "choice"):
            text = "\n".join(m.content for q in task.queries(item, mode) for m in q.messages)
            assert f"between a user and {other}" in text and speaker in text
            if partner == "person":
                assert "assistant" not in text.lower()


async def test_reply_rating_items_score_a_reader_of_the_thumbs_and_not_a_constant() -> None:
    rng = np.random.default_rng(3)
    chats = []
    for number in range(30):
        thumbs = rng.integers(0, 2, size=4).astype(float)
        said = [
            rated_turn(i, float(t), user=f"chat {number} message {i}.")
            for i, t in enumerate(thumbs)
        ]
        chats.append(conversation(said, cid=f"t{number}", rating_scale=THUMBS))
    task = make_task("rating")
    items = list(task.items(chats))
    assert len(items) == 120

    async def headline(answer: Callable[[float], float]) -> float | None:
        scripted = {f"{i.key}|answer": json.dumps({"rating": answer(i.gold.rating)}) for i in items}
        found = views(task, await Harness.scripted(m=scripted).evaluate_all(task, items, "m"))
        return METRICS.get("rating.position_adjusted_r").value(found)

    assert await headline(lambda thumb: thumb) == pytest.approx(1.0)  # planted: read exactly
    assert await headline(lambda thumb: 1.0) == 0.0  # the trap: a constant thumb up
