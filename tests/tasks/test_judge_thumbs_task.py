"""The pointwise judge audit: the judge's rubric score of each bot reply against the thumb."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from task_harness import Harness, make_task, views
from test_judge_audit_task import LIKED, bot_chat

from attunebench.answerform import TaskHint
from attunebench.models.base import Message
from attunebench.tasks.helpers.metrics import METRICS


def knows_the_thumbs(messages: list[Message], hint: TaskHint | None) -> str:
    assert hint is not None and hint.kind == "judge_rubric"
    return '{"score": 8}' if hint.candidates["A"] == LIKED else '{"score": 3}'


LIKED_NOW = {"rating": 1.0, "text": LIKED}


def always_high(messages: list[Message], hint: TaskHint | None) -> str:
    return '{"score": 9}'


def test_every_thumbed_bot_reply_is_an_item_only_in_chats_with_a_model() -> None:
    task = make_task("judge_thumbs", participant_context="blind")
    items = list(task.items([bot_chat()]))
    assert [(i.turn_index, i.item_id) for i in items] == [(t, "partner") for t in range(8)]
    assert [i.gold.liked for i in items] == [t % 2 == 0 for t in range(8)]
    assert list(task.items([bot_chat("person")])) == [] == list(task.items([bot_chat(None)]))
    [query] = task.queries(items[1], "generate")
    prompt = query.messages[-1].content
    assert "Message 1?" in prompt and "Message 2?" not in prompt
    assert query.role == "judge" and query.model is None


@pytest.mark.parametrize(
    ("judge", "balanced", "plain"), [(knows_the_thumbs, 1.0, 1.0), (always_high, 0.5, 0.75)]
)
async def test_a_judge_run_recovers_its_agreement_and_a_constant_judge_scores_chance(
    judge: Callable[[list[Message], TaskHint | None], str], balanced: float, plain: float
) -> None:
    task = make_task("judge_thumbs", participant_context="blind")
    chat = bot_chat()
    # three of four liked: a constant "liked" judge would get 0.75 plain agreement
    turns = tuple(
        t.model_copy(update={"responses": (t.responses[0].model_copy(update=LIKED_NOW),)})
        if t.index in (1, 3)
        else t
        for t in chat.turns
    )
    chat = chat.model_copy(update={"turns": turns})
    harness = Harness.scripted(judge=judge)
    records = await harness.evaluate_all(task, task.items([chat]), "judge", ["judge"])
    assert len(records) == 8 and all(r.status == "ok" for r in records)
    found = views(task, records)
    assert METRICS.get("judge_thumbs.balanced_agreement").value(found) == balanced
    # the trap: plain agreement rewards a constant "liked" judge with the base rate (0.75)
    assert METRICS.get("judge_thumbs.score").value(found) == plain


async def test_an_unparseable_score_is_invalid_and_counts_as_disagreement() -> None:
    task = make_task("judge_thumbs", participant_context="blind")
    harness = Harness.scripted(judge=["no idea"] * 8)
    records = await harness.evaluate_all(task, task.items([bot_chat()]), "judge", ["judge"])
    assert {r.status for r in records} == {"invalid"} and {r.score for r in records} == {0.0}
    found = views(task, records)
    assert METRICS.get("judge_thumbs.balanced_agreement").value(found) == 0.0
