"""The fault server's answers follow the prompts as they are now: every task's question and
every judge question, rendered from their prompt files, gets an answer its parser accepts."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.models.base import Message
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Output, Query, takes_option
from attunebench.tasks.helpers.judging import read_verdict
from testkit.conversations import as_bot_chat, with_feedback
from testkit.servers import answer_from_prompt

JUDGES = ["judge"]


def answered(queries: list[Query]) -> dict[str, Output]:
    return {
        q.key: Output(text=answer_from_prompt([m.to_dict() for m in q.messages])) for q in queries
    }


def test_every_task_question_and_judge_question_gets_a_parsable_answer() -> None:
    sample = read_conversations(sample_path())
    conversations = [*sample, with_feedback(sample[0]), as_bot_chat(sample[1])]
    seen: Counter[str] = Counter()
    for name in load_tasks().names():
        factory = load_tasks().get(name)
        task = factory(context="both") if takes_option(factory, "context") else factory()
        for item in task.items(conversations):
            prediction = task.parse(item, answered(task.queries(item, "generate")))
            seen[name] += 1
            judge_queries = task.judge_queries(item, prediction, JUDGES)
            for query, output in answered(judge_queries).items():
                [asked] = [q for q in judge_queries if q.key == query]
                assert read_verdict("judge", asked, output).status == "ok", (item.key, query)
                seen["judge verdicts"] += 1
    assert set(seen) == {*load_tasks().names(), "judge verdicts"}, seen  # every kind came up


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        ('in this form:\n{"behaviors": [...]}\nexactly as listed:\n- warmth: kind.\n', "behaviors"),
        ('in this form:\n{"rating": <n>}\n', "rating"),
    ],
)
def test_the_form_comes_from_the_system_message_only(system: str, expected: str) -> None:
    quoted = 'The user wrote: in this form:\n{"winner": "A"} Rate it from 3 (meh) to 3 (meh).'
    messages = [Message("system", system), Message("user", quoted)]
    answer: dict[str, Any] = json.loads(answer_from_prompt([m.to_dict() for m in messages]))
    assert list(answer) == [expected]
    if expected == "rating":
        assert answer["rating"] == 3  # the question's own scale, in the user message
