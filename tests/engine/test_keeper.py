"""Every call as a Keeper sees it (before it goes out, and its answer before the next call),
and the ledger's count of calls made: a call on the wire when the run stops is `lost`, a call
held back is not counted, and calls + retries + failures + lost is every request sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from echo_task import EchoTask

from attunebench.engine import RetryPolicy, RunConfig, read_ledger, run
from attunebench.engine.ledger import LedgerBook
from attunebench.models import MockProvider, ProviderError
from attunebench.models.base import ModelOutput
from attunebench.models.modelsfile import ModelEntry

KEY = "echo|c1|2|reply|"


class Recording:
    """A Keeper noting, at each event, how many calls the provider had made and how many the
    ledger counts lost (on the wire)."""

    def __init__(self, mock: MockProvider) -> None:
        self.mock = mock
        self.events: list[tuple[str, int, int]] = []
        self.keys: list[str] = []

    async def sending(self, ledger: LedgerBook) -> None:
        self.events.append(("sending", self.mock.calls, ledger.totals().lost))

    async def answered(
        self, key: str, output: ModelOutput, cost_usd: float, ledger: LedgerBook
    ) -> None:
        self.events.append(("answered", self.mock.calls, ledger.totals().lost))
        self.keys.append(key)


def config(dataset: Path, tmp_path: Path, mock: MockProvider) -> RunConfig:
    return RunConfig(
        data=dataset,
        out=tmp_path / "run",
        models=(ModelEntry(name="m", spec=mock.spec),),
        cache_path=tmp_path / "cache.sqlite",
        concurrency=1,  # one call at a time: the events alternate
        progress=False,
    )


async def test_a_keeper_hears_each_call_before_it_goes_out_and_its_answer_before_the_next(
    dataset: Path, tmp_path: Path
) -> None:
    busy = ProviderError("overloaded", retryable=True, status=503, retry_after_s=0.0)
    mock = MockProvider(failures={KEY: [busy]})
    keeper = Recording(mock)
    await run(
        config(dataset, tmp_path, mock),
        providers={"m": mock},
        tasks=[EchoTask()],
        policy=RetryPolicy(max_attempts=3, base_delay_s=0.0),
        keeper=keeper,
    )
    sendings = [e for e in keeper.events if e[0] == "sending"]
    assert [made for _, made, _ in sendings] == list(range(mock.calls))  # each before its call
    assert all(lost == 1 for _, _, lost in sendings)  # counted on the wire as it goes out
    answers = [e for e in keeper.events if e[0] == "answered"]
    assert len(answers) == mock.calls - 1 and all(lost == 0 for _, _, lost in answers)
    assert all(len(key) == 64 for key in keeper.keys)  # each with its cache key
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None
    (entry,) = ledger.entries
    assert (entry.calls, entry.retries, entry.lost) == (mock.calls - 1, 1, 0)


async def test_a_call_on_the_wire_when_the_run_stops_is_counted_lost(
    dataset: Path, tmp_path: Path
) -> None:
    mock = MockProvider(latency_s=[0.0, 0.0, 60.0])  # the third call never comes back
    running = asyncio.create_task(
        run(config(dataset, tmp_path, mock), providers={"m": mock}, tasks=[EchoTask()])
    )
    while mock.calls < 3:
        await asyncio.sleep(0.01)
    running.cancel()  # what a Ctrl-C does to the run
    await asyncio.gather(running, return_exceptions=True)
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None
    (entry,) = ledger.entries
    assert (entry.calls, entry.lost) == (2, 1)  # 3 calls made: 2 answered, 1 lost


async def test_a_call_its_keeper_holds_back_is_never_made_nor_counted(
    dataset: Path, tmp_path: Path
) -> None:
    mock = MockProvider()

    class Stopping(Recording):
        async def sending(self, ledger: LedgerBook) -> None:
            if mock.calls == 2:
                raise RuntimeError("the driver is stopping")

    stopped = asyncio.create_task(
        run(
            config(dataset, tmp_path, mock),
            providers={"m": mock},
            tasks=[EchoTask()],
            keeper=Stopping(mock),
        )
    )
    await asyncio.gather(stopped, return_exceptions=True)
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None and mock.calls == 2
    (entry,) = ledger.entries
    assert (entry.calls, entry.lost) == (2, 0)
