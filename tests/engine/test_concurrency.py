"""Pacing: calls in flight never exceed an endpoint's limit; rates are spread evenly."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine_harness import RunFn, write_dataset

from attunebench.answerform import TaskHint
from attunebench.engine.limits import Endpoint, RateLimiter
from attunebench.models import GenerateParams, Message, MockProvider, ModelOutput
from attunebench.models.modelsfile import ModelEntry


class OnOneServer(MockProvider):
    """Two of these share an endpoint, as two models on one server would; counts jointly."""

    endpoint = "http://shared.test/v1"
    in_flight_total = 0
    peak_total = 0

    async def generate(
        self, messages: list[Message], params: GenerateParams, hint: TaskHint | None = None
    ) -> ModelOutput:
        cls = OnOneServer
        cls.in_flight_total += 1
        cls.peak_total = max(cls.peak_total, cls.in_flight_total)
        try:
            return await super().generate(messages, params, hint)
        finally:
            cls.in_flight_total -= 1


async def test_in_flight_calls_never_exceed_the_limit(run_echo: RunFn, tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "wide.jsonl", conversations=12, turns=2)
    mock = MockProvider(latency_s=0.01)
    result = await run_echo({"m": mock}, data=data, concurrency=3)
    assert result.complete and mock.calls == 24
    assert mock.peak_in_flight == 3  # reached, never passed


async def test_models_file_concurrency_per_model(run_echo: RunFn, tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "wide.jsonl", conversations=12, turns=2)
    narrow, wide = MockProvider(latency_s=0.01), MockProvider("wide", latency_s=0.01)
    entries = {
        "narrow": ModelEntry(name="narrow", spec=narrow.spec, concurrency=2),
        "wide": ModelEntry(name="wide", spec=wide.spec, concurrency=5),
    }
    await run_echo({"narrow": narrow, "wide": wide}, data=data, entries=entries, concurrency=1)
    assert (narrow.peak_in_flight, wide.peak_in_flight) == (2, 5)


async def test_models_on_one_server_share_its_limit(run_echo: RunFn, tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "wide.jsonl", conversations=10, turns=2)
    first, second = OnOneServer("a", latency_s=0.01), OnOneServer("b", latency_s=0.01)
    await run_echo({"a": first, "b": second}, data=data, concurrency=4)
    assert OnOneServer.peak_total == 4
    assert first.calls == second.calls == 20


async def test_rate_limiter_spaces_starts_evenly() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    limiter = RateLimiter(per_second=20, sleep=sleep)
    for _ in range(5):
        await limiter.wait()
    # The first starts at once; each later one waits one more interval (0.05 s) than the last.
    assert len(waits) == 4
    for number, wait in enumerate(waits, start=1):
        assert abs(wait - 0.05 * number) < 0.01


async def test_endpoint_slot_counts_and_releases() -> None:
    endpoint = Endpoint("e", concurrency=2)

    async def hold() -> None:
        async with endpoint.slot():
            await asyncio.sleep(0.01)

    await asyncio.gather(*(hold() for _ in range(6)))
    assert endpoint.peak_in_flight == 2 and endpoint.in_flight == 0
