"""Response items at a real model's reply (chats held with a model, as ConvAI1's human-bot
chats): judged by the rubric alone, the real reply judged beside it and shown as the reference
row `reference/real-reply` with the person's thumb, never ranked."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import pytest
from task_harness import Harness, conversation, judged_runs, make_task, two_reply_turn

from attunebench.analysis.schema import ScoreRow, Summary
from attunebench.analysis.summary import Options, build_summary
from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation, Response, Turn
from attunebench.models.base import Message, ProviderError
from attunebench.models.mock import MockProvider
from attunebench.records import JUDGE_FAILED, ItemRecord
from attunebench.report import render_html, render_markdown, views
from attunebench.tasks.base import Output
from attunebench.tasks.response import REAL_REFERENCE as REFERENCE

CHATS, TURNS = 24, 6
WRITERS = ("m/alpha", "m/beta")
Judge = Callable[[list[Message], TaskHint | None], str]


def _draw(*parts: str) -> float:
    digest = hashlib.sha256("|".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def bot_reply(chat: int, turn: int) -> tuple[str, float | None]:
    """The bot's reply and the person's thumb on it: liked at random, some unrated."""
    draw = _draw("thumb", str(chat), str(turn))
    thumb = None if draw > 0.85 else 1.0 if draw < 0.4 else 0.0
    verdict = "LIKED" if thumb == 1.0 else "DISLIKED" if thumb == 0.0 else "UNRATED"
    return f"BOT {verdict} reply {chat}-{turn}", thumb


def bot_chats(partner: str | None = "model") -> list[Conversation]:
    out = []
    for c in range(CHATS):
        turns = []
        for t in range(TURNS):
            text, thumb = bot_reply(c, t)
            reply = Response(id="partner", text=text, rating=thumb, model="convai1-bot")
            turns.append(Turn(index=t, user=f"chat {c}, message {t}?", responses=(reply,)))
        labels = {} if partner is None else {"partner": partner}
        out.append(conversation(turns, cid=f"bot-{c:02d}", labels=labels))
    return out


def writer(model: str) -> Judge:
    def reply(messages: list[Message], hint: TaskHint | None) -> str:
        return f"MODEL {model} reply to {messages[-1].content}"

    return reply


def tracks_the_person(messages: list[Message], hint: TaskHint | None) -> str:
    """Scores a liked real reply high and a disliked one low; a model's reply 5 or 6."""
    assert hint is not None and hint.kind == "judge_rubric"
    reply = hint.candidates["A"]
    score = 8 if "BOT LIKED" in reply else 3 if "BOT DISLIKED" in reply else 5
    return json.dumps({"score": score + ("beta" in reply)})


def ignores_the_reply(messages: list[Message], hint: TaskHint | None) -> str:
    """A score drawn at random for each reply, whatever it says."""
    assert hint is not None
    return json.dumps({"score": 1 + int(_draw("noise", hint.candidates["A"]) * 10)})


async def judged(judge: Judge, **options: str) -> list[ItemRecord]:
    providers = {m: MockProvider(m.replace("/", "-"), outputs=writer(m)) for m in WRITERS}
    providers["j"] = MockProvider("j", outputs=judge)  # type: ignore[arg-type]
    harness = Harness(providers)  # type: ignore[arg-type]
    task = make_task("response", context="blind", **options)
    items = list(task.items(bot_chats()))
    return [r for m in WRITERS for r in await harness.evaluate_all(task, items, m, ["j"])]


def summarised(records: list[ItemRecord]) -> Summary:
    runs = judged_runs(records, WRITERS, bot_chats())
    return build_summary(runs, Options(resamples=300, permutations=99))


def rows_of(summary: Summary, model: str) -> dict[str, ScoreRow]:
    return {r.metric: r for r in summary.scores if r.model == model}


def test_items_at_every_real_reply_with_the_thumb_and_none_without_a_model() -> None:
    task = make_task("response", context="blind")
    items = list(task.items(bot_chats()))
    assert len(items) == CHATS * TURNS
    for item in items:
        text, thumb = bot_reply(int(item.conversation.id[4:]), item.turn_index)
        gold = item.gold
        assert (gold.real, gold.real_text, gold.chosen, gold.rejected) == (
            "partner",
            text,
            None,
            None,
        )
        assert gold.real_liked is (None if thumb is None else thumb == 1.0)
    # a chat between two people, or one that does not say: no real model reply, no item
    assert list(task.items(bot_chats("person"))) == [] == list(task.items(bot_chats(None)))
    # pairwise judging needs a chosen and a rejected reply: left out, and counted
    pairwise = make_task("response", context="blind", judge_mode="pairwise")
    assert list(pairwise.items(bot_chats())) == []
    assert sum(pairwise.left_out(bot_chats()).values()) == CHATS * TURNS
    assert task.left_out(bot_chats()) == {}


def test_the_real_reply_is_judged_on_the_same_footing_as_the_models() -> None:
    task = make_task("response", context="blind")
    item = next(iter(task.items(bot_chats())))
    prediction = task.parse(item, {"reply": Output(text="MODEL reply")})
    mine, real = task.judge_queries(item, prediction, ["j"])
    assert (mine.key, real.key) == ("rubric@j", "real/rubric@j")
    assert mine.prompt == real.prompt and mine.model == real.model == "j"
    theirs = real.messages[-1].content.replace(item.gold.real_text, "MODEL reply")
    assert theirs == mine.messages[-1].content  # only the reply differs
    assert "thumb" not in theirs.lower() and "LIKED" not in mine.messages[-1].content
    # items with a chosen and a rejected reply are judged as before: no real-reply query
    picked = conversation([two_reply_turn(0, "I can't sleep.")])
    [pick_item] = task.items([picked])
    keys = [q.key for q in task.judge_queries(pick_item, prediction, ["j"])]
    assert not any(k.startswith("real/") for k in keys) and "vs_chosen/model-first@j" in keys


async def test_a_judge_that_tracks_the_person_is_recovered_and_not_ranked() -> None:
    records = await judged(tracks_the_person)
    assert all(r.status == "ok" for r in records)
    # each model is scored on its own reply, by the rubric alone: 5 and 6 of 10
    assert {r.model: r.score for r in records} == {"m/alpha": 4 / 9, "m/beta": 5 / 9}
    summary = summarised(records)
    real = rows_of(summary, REFERENCE)
    assert {r.model_kind for r in real.values()} == {"reference"}
    assert not any(r.subject for r in real.values())
    assert real["real_thumb_auroc"].value == 1.0
    assert real["real_rubric_thumb_up"].value == 8.0 and real["real_rubric_thumb_down"].value == 3.0
    assert real["score"].headline and real["rubric"].n == CHATS * TURNS
    # the metrics about the real reply are its row's, not a model's
    assert not any(k.startswith("real_") for k in rows_of(summary, "m/alpha"))
    # never ranked, though its score (mostly liked or unrated replies) is above m/alpha's
    assert real["score"].value is not None and real["score"].value > 4 / 9
    assert REFERENCE not in summary.rank_correlation.models
    [lead] = [lead for lead in summary.leads if lead.metric == "score"]
    assert (lead.leader, lead.runner_up) == ("m/beta", "m/alpha")
    assert REFERENCE in render_markdown(summary)
    # in the report, the thumb's numbers sit in the reference's own column, no model's
    [board] = views.leaderboards(summary)
    columns = [r.model for r in board.rows]
    cells = dict(board.secondary)["real_thumb_auroc"]
    assert [c is not None for c in cells] == [m == REFERENCE for m in columns]
    assert "real_thumb_auroc" in render_html(summary)


def constant(messages: list[Message], hint: TaskHint | None) -> str:
    return '{"score": 7}'


@pytest.mark.parametrize(("judge", "within"), [(ignores_the_reply, 0.12), (constant, 0.0)])
async def test_a_judge_that_ignores_the_reply_scores_chance_agreement(
    judge: Judge, within: float
) -> None:
    real = rows_of(summarised(await judged(judge)), REFERENCE)["real_thumb_auroc"]
    assert real.value == pytest.approx(0.5, abs=within)
    assert real.ci_low is not None and real.ci_high is not None
    assert real.ci_low <= 0.5 <= real.ci_high


def fails_on_disliked(messages: list[Message], hint: TaskHint | None) -> str:
    """Tracks the person, but every call about a disliked real reply fails for good."""
    assert hint is not None
    if "BOT DISLIKED" in hint.candidates["A"]:
        raise ProviderError("HTTP 400: flagged by the content filter", retryable=False)
    return tracks_the_person(messages, hint)


async def test_a_judge_failing_on_the_real_reply_costs_the_model_nothing() -> None:
    records = await judged(fails_on_disliked)
    # the models' own verdicts were all read: no item is a judge failure of theirs
    assert all(r.status == "ok" and JUDGE_FAILED not in r.flags for r in records)
    assert {r.model: r.score for r in records} == {"m/alpha": 4 / 9, "m/beta": 5 / 9}
    real = rows_of(summarised(records), REFERENCE)
    # the disliked replies went unscored: left out of the reference row, never scored 1
    assert "real_rubric_thumb_down" not in real and real["real_rubric_thumb_up"].value == 8.0
    assert real["score"].n == sum(
        bot_reply(c, t)[1] != 0.0 for c in range(CHATS) for t in range(TURNS)
    )
