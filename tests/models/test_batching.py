"""The batching layer on its own, against a scripted batch API: requests gather into batches
within the limits, the same request is sent once, the journal maps requests to batches and
survives a torn last line, and a batch that cannot be polled fails its requests for now."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from attunebench.models.base import ProviderError
from attunebench.models.batch_journal import Journal
from attunebench.models.batching import (
    BatchAPI,
    BatchLimits,
    BatchQueue,
    BatchState,
    BatchTiming,
    line_failure,
    request_key,
)

pytestmark = pytest.mark.timeout(60)


class Scripted(BatchAPI[str]):
    """Batches that end after `polls` polls, answering each request with its body's text."""

    def __init__(self, limits: BatchLimits, polls: int = 1) -> None:
        self.limits = limits
        self.polls = polls
        self.batches: dict[str, list[str]] = {}
        self.texts: dict[str, str] = {}
        self.seen: dict[str, int] = {}
        self.fail_polls = False
        self.expire: set[str] = set()

    def line_bytes(self, key: str, body: dict[str, Any]) -> int:
        return len(str(body["text"])) + 10

    async def submit(
        self, requests: Sequence[tuple[str, dict[str, Any]]], prepared: str | None
    ) -> str:
        batch_id = f"b{len(self.batches) + 1}"
        self.batches[batch_id] = [key for key, _ in requests]
        self.texts.update({key: str(body["text"]) for key, body in requests})
        return batch_id

    async def state(self, batch_id: str) -> BatchState:
        if self.fail_polls:
            raise ProviderError("HTTP 404: no such batch", retryable=False, status=404)
        self.seen[batch_id] = self.seen.get(batch_id, 0) + 1
        return BatchState(ended=self.seen[batch_id] >= self.polls, status="ended")

    async def results(self, batch_id: str, state: BatchState) -> dict[str, str | ProviderError]:
        return {
            key: line_failure("expired") if key in self.expire else self.texts[key].upper()
            for key in self.batches[batch_id]
        }


def queue(api: Scripted) -> BatchQueue[str]:
    return BatchQueue(api, "test/model", BatchTiming(quiet_s=0.05, wait_s=1.0, poll_s=0.01))


def body(text: str) -> tuple[str, dict[str, Any]]:
    payload = {"text": text}
    return request_key(payload), payload


async def test_requests_go_out_in_batches_within_the_limits() -> None:
    api = Scripted(BatchLimits(max_requests=4, max_bytes=60))
    batches = queue(api)
    requests = [body(f"item {n}") for n in range(10)]  # 16 bytes each: 3 a batch by size
    answers = await asyncio.gather(*(batches.request(k, b) for k, b in requests))
    await batches.aclose()
    assert answers == [f"ITEM {n}" for n in range(10)]
    assert [len(keys) for keys in api.batches.values()] == [3, 3, 3, 1]
    counts = batches.counts()
    assert (counts.submitted, counts.in_progress, counts.done, counts.queued) == (4, 0, 4, 0)


async def test_the_same_request_is_sent_once_and_shared() -> None:
    api = Scripted(BatchLimits(100, 10_000))
    batches = queue(api)
    key, payload = body("same")
    first, second = await asyncio.gather(
        batches.request(key, payload), batches.request(key, payload)
    )
    await batches.aclose()
    assert first == second == "SAME" and list(api.batches.values()) == [[key]]


async def test_a_request_too_large_for_any_batch_fails_for_good() -> None:
    batches = queue(Scripted(BatchLimits(100, 20)))
    with pytest.raises(ProviderError, match="larger than a batch") as raised:
        await batches.request(*body("x" * 50))
    await batches.aclose()
    assert raised.value.permanent


async def test_the_journal_lets_a_new_queue_wait_on_the_old_batch(tmp_path: Path) -> None:
    path = tmp_path / "batches.jsonl"
    api = Scripted(BatchLimits(100, 10_000), polls=10**6)  # never ends in the first session
    first = queue(api)
    first.attach(path)
    key, payload = body("kept")
    waiting = asyncio.create_task(first.request(key, payload))
    while not api.batches:
        await asyncio.sleep(0.01)
    waiting.cancel()
    await first.aclose()  # the process dies with its batch in progress
    api.polls = 0
    second = queue(api)
    second.attach(path)
    assert await second.request(key, payload) == "KEPT"
    await second.aclose()
    assert len(api.batches) == 1  # polled the first session's batch, made none


async def test_unanswered_requests_go_out_again_and_a_torn_line_is_ignored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "batches.jsonl"
    api = Scripted(BatchLimits(100, 10_000))
    key, payload = body("late")
    api.expire = {key}
    first = queue(api)
    first.attach(path)
    with pytest.raises(ProviderError, match="expired") as raised:
        await first.request(key, payload)
    await first.aclose()
    assert not raised.value.retryable and not raised.value.permanent
    with path.open("a") as journal:
        journal.write('{"format": "attunebench-batches/v1", "event": "subm')  # killed mid-line
    assert Journal("test/model", path).batch_of == {}  # expired: mapped to no batch
    assert Journal("other/model", path).batch_of == {}
    api.expire = set()
    second = queue(api)
    second.attach(path)
    assert await second.request(key, payload) == "LATE"
    await second.aclose()
    assert list(api.batches) == ["b1", "b2"]  # a new batch for it


async def test_a_batch_that_cannot_be_polled_fails_its_requests_for_now() -> None:
    api = Scripted(BatchLimits(100, 10_000))
    api.fail_polls = True
    batches = queue(api)
    key, payload = body("lost")
    with pytest.raises(ProviderError, match="cannot poll batch b1") as raised:
        await batches.request(key, payload)
    assert not raised.value.permanent
    api.fail_polls = False
    assert await batches.request(key, payload) == "LOST"  # polled again, not sent again
    await batches.aclose()
    assert len(api.batches) == 1


class Prepared(Scripted):
    """A batch API that makes an input file first, as OpenAI's does."""

    def __init__(self, limits: BatchLimits) -> None:
        super().__init__(limits)
        self.made_from: dict[str, str] = {}  # input file -> batch

    async def prepare(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> str:
        self.texts.update({key: str(body["text"]) for key, body in requests})
        return f"file{len(self.made_from) + 1}"

    async def submit(
        self, requests: Sequence[tuple[str, dict[str, Any]]], prepared: str | None
    ) -> str:
        batch_id = await super().submit(requests, prepared)
        self.made_from[str(prepared)] = batch_id
        return batch_id

    async def find(self, prepared: str) -> str | None:
        return self.made_from.get(prepared)


async def test_a_batch_made_but_not_journalled_is_found_by_its_input_file(tmp_path: Path) -> None:
    path = tmp_path / "batches.jsonl"
    api = Prepared(BatchLimits(100, 10_000))
    requests = [body("one"), body("two")]
    made = Journal("test/model", path)
    file_id = await api.prepare(requests)
    made.record("prepared", "", [k for k, _ in requests], "prepared", file_id)
    await api.submit(requests, file_id)  # killed before the batch's id reached the journal
    resumed = queue(api)
    resumed.attach(path)
    answers = await asyncio.gather(*(resumed.request(k, b) for k, b in requests))
    await resumed.aclose()
    assert answers == ["ONE", "TWO"] and list(api.batches) == ["b1"]  # found, none made
    assert Journal("test/model", path).batch_of == dict.fromkeys([k for k, _ in requests], "b1")


async def test_a_prepared_file_with_no_batch_goes_out_in_a_new_one(tmp_path: Path) -> None:
    path = tmp_path / "batches.jsonl"
    api = Prepared(BatchLimits(100, 10_000))
    key, payload = body("orphan")
    Journal("test/model", path).record("prepared", "", [key], "prepared", "file-lost")
    resumed = queue(api)
    resumed.attach(path)
    assert await resumed.request(key, payload) == "ORPHAN"
    await resumed.aclose()
    assert list(api.batches) == ["b1"]
