"""Typed records of every task for the metric registry test, made the way a run makes them.

Each task's own items (the sample, plus hand-built conversations where the sample lacks a
kind of gold) are answered through the real engine by seeded random models: valid answers
of every shape the task reads (nulls among them), unparseable ones, and where the task has a
choice form, option probabilities. Failed records are not made: the analysis hands metrics
only answered records (`analysis.cells`). Every task but the judges' reads items of two corpus
parts (source names), as a suite's are.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np
from task_harness import (
    Chooser,
    Harness,
    conversation,
    make_task,
    rated_turn,
    sample_conversations,
    two_reply_turn,
)

from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation, Outcome, RatingScale, State, Turn
from attunebench.models.base import Message, Provider
from attunebench.models.mock import MockProvider
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Item, Task, View

GARBAGE = "I would rather not answer in JSON today."
Answer = Callable[[Item[Any], str, random.Random], str]


def _maybe(rng: random.Random, value: object, p_null: float = 0.2) -> object:
    return None if rng.random() < p_null else value


def responder(items: Sequence[Item[Any]], answer: Answer, model: str, p_garbage: float) -> Any:
    """A scripted model answering each query from its item, seeded by the query's address."""
    by_key = {item.key: item for item in items}

    def respond(messages: list[Message], hint: TaskHint | None) -> str:
        assert hint is not None
        item_key, _, query = hint.item_key.rpartition("|")
        rng = random.Random(f"{model}:{hint.item_key}")
        if rng.random() < p_garbage:
            return GARBAGE
        return answer(by_key[item_key], query, rng)

    return respond


def spread(messages: Sequence[Message], keys: Sequence[str], hint: TaskHint | None) -> Any:
    assert hint is not None
    rng = random.Random(f"choice:{hint.item_key}")
    weights = [rng.random() ** 2 for _ in keys]
    total = sum(weights)
    return {key: w / total for key, w in zip(keys, weights, strict=True)}


async def _answer(
    task: Task[Any, Any],
    items: list[Item[Any]],
    answer: Answer,
    *,
    p_garbage: float = 0.1,
    choice: bool = True,
    judges: dict[str, Answer] | None = None,
) -> list[View[Any, Any]]:
    """Half the items answered by generation, the other half (where the task has a choice
    form) by option probabilities."""
    providers: dict[str, Provider] = {
        "gen": MockProvider("gen", outputs=responder(items, answer, "gen", p_garbage)),
        "pick": Chooser("pick", spread),
    }
    for name, judged in (judges or {}).items():
        providers[name] = MockProvider(name, outputs=responder(items, judged, name, 0.1))
    harness = Harness(providers, choice=frozenset({"pick"}))
    records = []
    for i, item in enumerate(items):
        chooses = choice and "choice" in task.answer_modes and i % 2 == 1
        model, mode = ("pick", "choice") if chooses else ("gen", "generate")
        records.append(await harness.evaluate(task, item, model, list(judges or ()), mode))
    assert not any(r.status == "failed" for r in records), [r.error for r in records]
    return [task.scoring.view(r) for r in records]


# Emotion ----------------------------------------------------------------------------------


def emotion_answer(item: Item[Any], query: str, rng: random.Random) -> str:
    labels = [label.name for label in item.taxonomy.emotions]
    named = rng.sample(labels, rng.randint(1, 3))
    if item.gold.primary and rng.random() < 0.4:
        named[0] = item.gold.primary  # right often enough for every label to score
    answer: dict[str, object] = {
        "primary": named[0],
        "emotions": named,
        "intensity": _maybe(rng, rng.randint(1, 5)),
        "valence": _maybe(rng, round(rng.uniform(-1, 1), 2)),
        "arousal": _maybe(rng, round(rng.uniform(0, 1), 2)),
    }
    if item.gold.panas:
        answer["panas"] = {k: _maybe(rng, rng.randint(1, 5)) for k in item.gold.panas}
    return json.dumps(answer)


def emotion_extra() -> list[Conversation]:
    """Gold the sample lacks: numbers without labels, labels without a primary, and a
    conversation-level label."""
    return [
        conversation(
            [
                two_reply_turn(0, "I don't know.", state=State(intensity=2, valence=-0.2)),
                two_reply_turn(1, "Maybe.", state=State(emotions=("hope", "anxiety"))),
                two_reply_turn(2, "Ok.", state=State(emotions=("relief",), arousal=0.2)),
            ],
            cid="emotion-extra",
        ),
        conversation(
            [Turn(index=0, user="My dog died."), Turn(index=1, user="I miss him so much.")],
            cid="emotion-level",
            emotion="sadness",
        ),
    ]


# Behavior ---------------------------------------------------------------------------------


def behavior_answer(item: Item[Any], query: str, rng: random.Random) -> str:
    labels = [label.name for label in item.taxonomy.behaviors]
    named = rng.sample(labels, rng.randint(0, 3))
    if rng.random() < 0.5:
        named += list(item.gold.behaviors[:1])
    return json.dumps({"behaviors": named})


# Preference and the judge audit -----------------------------------------------------------


def preference_answer(item: Item[Any], query: str, rng: random.Random) -> str:
    return json.dumps({"choice": rng.choice(["A", "B", "A", "B", "tie"])})


def verdict_answer(item: Item[Any], query: str, rng: random.Random) -> str:
    return json.dumps({"winner": rng.choice(["A", "B", "A", "B", "tie"]), "reason": "seeded"})


def rated_conversations(n: int = 4) -> list[Conversation]:
    rng = random.Random(5)
    return [
        conversation(
            [rated_turn(t, float(rng.randint(1, 5))) for t in range(6)],
            cid=f"rated-{c}",
        )
        for c in range(n)
    ]


def bot_chats(n: int = 6) -> list[Conversation]:
    """Chats held with a model, each bot reply with a thumb (some half up, half down)."""
    rng = random.Random(17)
    return [
        conversation(
            [rated_turn(t, rng.choice((0.0, 0.0, 1.0, 0.5))) for t in range(5)],
            cid=f"bot-{c}",
            labels={"partner": "model"},
        )
        for c in range(n)
    ]


# Response ---------------------------------------------------------------------------------


def reply_answer(item: Item[Any], query: str, rng: random.Random) -> str:
    return "  " if rng.random() < 0.05 else f"Here for you ({rng.randint(1, 99)})."


def judge_answer(item: Item[Any], query: str, rng: random.Random) -> str:
    if random.Random(f"derailed:{item.key}").random() < 0.12:
        return GARBAGE  # every judge derails on this item: no usable verdict
    if query.startswith(("rubric", "real/rubric")):
        return json.dumps({"score": rng.randint(1, 10)})
    return verdict_answer(item, query, rng)


# Outcome and rating -------------------------------------------------------------------------


def numbers_answer(item: Item[Any], query: str, rng: random.Random) -> str:
    scales = item.gold.scales if hasattr(item.gold, "scales") else {"rating": item.gold.scale}
    asked = [k for k in scales if k != "intensity_change"]
    return json.dumps({k: _maybe(rng, rng.randint(1, 5)) for k in asked})


def outcome_extra(n: int = 14) -> list[Conversation]:
    rng = random.Random(11)
    out = []
    for c in range(n):
        start = float(rng.randint(1, 5))
        turns = [
            Turn(index=0, user="It has been hard.", state=State(intensity=start)),
            rated_turn(1, None, user="Thanks."),
        ]
        outcome = Outcome(
            final_state=State(intensity=float(rng.randint(1, 5))),
            rating=float(rng.randint(1, 5)) if c % 3 else None,
            survey={"empathy": rng.randint(1, 5), "relevance": rng.randint(1, 5)},
        )
        scale = RatingScale(low=1, high=5)
        out.append(conversation(turns, cid=f"outcome-{c}", outcome=outcome, rating_scale=scale))
    return out


def rating_conversations(n: int = 9) -> list[Conversation]:
    rng = random.Random(13)
    out = []
    for c in range(n):
        turns = [
            rated_turn(t, None).model_copy(
                update={"feedback": float(rng.randint(1, 5)) if t % 2 else None}
            )
            for t in range(2 * (c % 4) + 4)
        ]
        out.append(conversation(turns, cid=f"rating-{c}", rating_scale=RatingScale(low=1, high=5)))
    return out


def second_part(conversations: Sequence[Conversation]) -> list[Conversation]:
    """Every other conversation moved to a second corpus part (another source name), so that
    the metrics read within each part, and their views across parts, read several."""
    return [
        c.model_copy(update={"source": c.source.model_copy(update={"name": "second-part"})})
        if i % 2
        else c
        for i, c in enumerate(conversations)
    ]


# All of it ----------------------------------------------------------------------------------


async def _all() -> dict[str, list[View[Any, Any]]]:
    sample = sample_conversations()
    found: dict[str, list[View[Any, Any]]] = {}

    async def run(name: str, data: list[Conversation], answer: Answer, **kw: Any) -> None:
        options = kw.pop("options", {})
        task = make_task(name, **options)
        found[name] = await _answer(task, list(task.items(data)), answer, **kw)

    await run("emotion", sample + emotion_extra(), emotion_answer)
    await run("behavior", second_part(sample), behavior_answer)
    await run("preference", sample + rated_conversations(), preference_answer)
    await run("judge_audit", sample, verdict_answer)
    await run(
        "response",
        sample + bot_chats(),  # picks, and chats with a model: its real reply is judged too
        reply_answer,
        p_garbage=0.0,
        choice=False,
        judges={"j1": judge_answer, "j2": judge_answer},
    )
    await run("outcome", sample + outcome_extra(), numbers_answer)
    await run("rating", second_part(rating_conversations()), numbers_answer)
    thumbs = make_task("judge_thumbs")
    await run("judge_thumbs", bot_chats(), form_answer(thumbs), p_garbage=0.2, choice=False)
    for name in load_tasks():  # a task added since: the random answers its own form draws
        if name not in found:
            await run(name, sample, form_answer(make_task(name)))
    return found


def form_answer(task: Task[Any, Any]) -> Answer:
    """Answers drawn by the task's own answer form (`AnswerForm.random`), seeded by the query."""

    def answer(item: Item[Any], query: str, rng: random.Random) -> str:
        [asked] = [q for q in task.queries(item, "generate") if q.key == query]
        if asked.hint is None or asked.hint.form is None:
            return "A plain reply."
        return asked.hint.form.random(asked.hint, np.random.default_rng(rng.randrange(2**32)))

    return answer


@cache
def records_by_task() -> dict[str, list[View[Any, Any]]]:
    """Each task's answered records, read back as typed views."""
    return asyncio.run(_all())
