"""Replies as their models write them: pieces from both models as they come, a reply that fails
partway written again (its partial text cleared), both or neither, and the server-sent events
a page reads, whose replies are stored exactly as sent; the message post with the page's script
returns before any reply is written."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from collect_harness import POOL, Walker, invite, study_data
from fastapi.testclient import TestClient

from attunebench.answerform import TaskHint
from attunebench.collect import crud
from attunebench.collect.db import Database, make_engine
from attunebench.collect.generation import Question
from attunebench.collect.streaming import (
    Complete,
    Event,
    Failed,
    Piece,
    Reset,
    stream_replies,
)
from attunebench.collect.study import parse_study
from attunebench.models.base import GenerateParams, Message, ModelOutput, ProviderError


class Faltering:
    """Writes its words one at a time, and breaks after the first `breaks_after` of them on
    its first `failures` tries."""

    def __init__(self, spec: str, text: str, failures: int, breaks_after: int = 2) -> None:
        self.spec, self.text, self.failures, self.breaks_after = spec, text, failures, breaks_after

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        raise AssertionError("a streaming provider is read as a stream")

    async def stream(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> AsyncIterator[str]:
        failing = self.failures > 0
        self.failures -= 1
        for n, word in enumerate(re.findall(r"\s*\S+", self.text)):
            if failing and n == self.breaks_after:
                raise ProviderError("connection dropped", retryable=True)
            await asyncio.sleep(0)
            yield word

    async def aclose(self) -> None:
        return None


class Whole:
    """A provider with no stream: its reply comes as one piece."""

    spec = "whole/one"

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        return ModelOutput(text="  All of it at once.  ")


def _events(providers: dict[str, Any]) -> list[Event]:
    study = parse_study(study_data())
    positions = dict(zip("AB", providers, strict=True))

    async def collect() -> list[Event]:
        stream = stream_replies(providers, study, Question(positions, [], "Hello.", "p1:0"))
        return [event async for event in stream]

    return asyncio.run(collect())


def test_a_reply_that_fails_partway_is_written_again() -> None:
    text = "One two three four five."
    events = _events({"a/x": Faltering("a/x", text, failures=1), "whole/one": Whole()})
    pieces_a = [e.text for e in events if isinstance(e, Piece) and e.position == "A"]
    assert "".join(pieces_a) == "One two" + text  # two words, then all of it again
    reset = events.index(Reset("A"))
    assert (
        "".join(e.text for e in events[reset:] if isinstance(e, Piece) and e.position == "A")
        == text
    )
    assert [e.text for e in events if isinstance(e, Piece) and e.position == "B"] == [
        "  All of it at once.  "
    ]
    complete = events[-1]
    assert isinstance(complete, Complete)
    assert [(r.position, r.text) for r in complete.replies] == [
        ("A", text),
        ("B", "All of it at once."),
    ]


def test_a_reply_that_keeps_failing_fails_the_turn() -> None:
    events = _events(
        {
            "a/x": Faltering("a/x", "This one never gets whole.", failures=5),
            "b/y": Faltering("b/y", "Fine.", 0),
        }
    )
    assert isinstance(events[-1], Failed) and events[-1].failures == {"a/x": "connection dropped"}
    assert not any(isinstance(e, Complete) for e in events)


def _sse(body: str) -> list[tuple[str, dict[str, Any]]]:
    found = re.findall(r"event: (\w+)\ndata: (.*)\n\n", body)
    return [(name, json.loads(data)) for name, data in found]


def test_the_stream_a_page_reads(make_client: Any, database_url: str) -> None:
    client: TestClient = make_client()
    (token,) = invite(database_url)
    walker = Walker(client, token)
    walker.consent()
    walker.traits()
    posted = walker.message("I feel stuck.", stream="1")
    assert walker.step() == "pending:0"  # stored, and nothing written yet
    page = walker.page()
    assert f'data-stream="/p/{token}/stream"' in page and "Get the replies" in page
    assert posted.status_code == 200

    events = _sse(client.get(f"/p/{token}/stream").text)
    names = [name for name, _ in events]
    assert names.count("piece") >= 2 and names[-1] == "done"
    streamed: dict[str, str] = {}
    for name, data in events:
        if name == "piece":
            streamed[data["position"]] = streamed.get(data["position"], "") + data["text"]
    done = events[-1][1]
    assert done["step"] == "judge:0"
    assert done["replies"] == {p: t.strip() for p, t in streamed.items()}
    database = Database(make_engine(database_url))
    with database.read() as session:
        (participant,) = crud.all_participants(session)
        stored = {r.position: r.text for r in participant.turns[0].replies}
        models = {r.model for r in participant.turns[0].replies}
    database.dispose()
    assert stored == done["replies"] and models <= set(POOL)
    assert walker.step() == "judge:0"
    again = _sse(client.get(f"/p/{token}/stream").text)
    assert again == [("done", done)]  # a reload gets the stored replies, nothing new
    walker.judge()
    assert _sse(client.get(f"/p/{token}/stream").text) == [("reload", {})]


def test_the_stream_counts_against_the_limit_when_it_writes(
    make_client: Any, database_url: str
) -> None:
    """Writing the replies calls the models, so it counts as a post: the message that asks
    for them as a stream counts it with itself, and a stream opened again (the message's
    count spent, as after a restart) counts on its own; sending replies already stored does
    not."""
    client: TestClient = make_client(parse_study(study_data(limits={"posts_per_minute": 4})))
    first, second = invite(database_url, 2)
    walker = Walker(client, first)
    walker.consent()
    walker.traits()
    walker.message("I feel stuck.", stream="1")  # four posts so far: the message and its stream
    assert client.get(f"/p/{first}/stream").status_code == 200  # written, counted already
    stored = _sse(client.get(f"/p/{first}/stream").text)
    assert [name for name, _ in stored] == ["done"]  # stored already: not counted
    walker.post("judge", {"choice": "A"}, expect=429)  # the limit is spent
    other = Walker(client, second)
    other.consent()
    other.traits()
    other.post("end", {}, expect=200)  # a stale post, counted: the third
    other.message("Me too.", 429, stream="1")  # with its stream, it would make five
    other.message("Me too.")  # alone, the fourth: its replies are written by the post
    assert other.step() == "judge:0"
    third = Walker(client, invite(database_url)[0])
    third.consent()
    third.traits()
    third.message("Me three.", stream="1")  # the fourth, with its stream
    client.app.state.collect.streams_paid.clear()  # as if its stream came to another process
    assert client.get(f"/p/{third.token}/stream").status_code == 429  # counted alone: a fifth
    assert third.step() == "pending:0"  # nothing was written
