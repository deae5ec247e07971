"""Batch APIs end to end against the local stand-ins: a batch run gives the records of a live
run at half the price; killed with SIGKILL mid-way and resumed, it polls the batches it had
submitted and sends no request twice; an expired batch and failed lines end as failed items
that a resumed run sends again in a new batch."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from attunebench.data.sample import sample_path
from attunebench.engine import RunConfig, RunResult, read_ledger, read_records, run
from attunebench.models.batch_journal import JOURNAL_FILE, JournalLine
from attunebench.models.modelsfile import ModelEntry
from registered import cli_command, cli_env
from testkit.records import Key, diff_records, run_records
from testkit.servers.anthropic_stub import AnthropicStub
from testkit.servers.openai_stub import OpenAIStub

pytestmark = pytest.mark.timeout(300)
Records = dict[Key, dict[str, Any]]
FAST = {"batch_poll_s": 0.02, "batch_quiet_s": 0.1}
SUBJECT = {
    "spec": "openai/gpt-5-mini",
    "api": "openai",
    "price": {"input": 0.25, "output": 2.0},
    "params": {"max_tokens": 4000, "reasoning_effort": "low"},
}
JUDGE = {"spec": "openai/gpt-4.1-mini", "api": "openai", "price": {"input": 0.4, "output": 1.6}}


def entries(url: str, *, batch: bool, **options: Any) -> tuple[ModelEntry, ModelEntry]:
    extra: dict[str, Any] = {"batch": True, "options": {**FAST, **options}} if batch else {}
    return (
        ModelEntry.model_validate({"name": "subject", "base_url": url, **SUBJECT, **extra}),
        ModelEntry.model_validate({"name": "judge", "base_url": url, **JUDGE, **extra}),
    )


def engine_run(out: Path, models: tuple[ModelEntry, ...], **options: Any) -> RunResult:
    judges = options.pop("judges", ())
    config = RunConfig(
        data=sample_path(),
        out=out,
        models=models,
        judges=judges,
        cache_path=out.with_name(out.name + "-cache.sqlite"),
        progress=False,
        **options,
    )
    return asyncio.run(run(config))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Records:
    """Every task of the sample, subject and judge answering live."""
    out = tmp_path_factory.mktemp("live") / "run"
    with OpenAIStub() as stub:
        subject, judge = entries(f"{stub.base_url}/v1", batch=False)
        result = engine_run(out, (subject,), judges=(judge,))
    assert result.complete
    return run_records(out)


def assert_same_at_half_the_price(live: Records, batch: Records) -> None:
    differences = diff_records(live, batch)
    assert all(line.endswith(": cost_usd differ") for line in differences), differences[:5]
    for key, record in batch.items():
        assert record["cost_usd"] == pytest.approx(live[key]["cost_usd"] / 2)
        assert record["cost_usd"] > 0


def journal(rundir: Path) -> list[JournalLine]:
    path = rundir / JOURNAL_FILE
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [JournalLine.model_validate_json(line) for line in lines]


def test_a_batch_run_gives_the_live_records_at_half_the_price(
    live: Records, tmp_path: Path
) -> None:
    with OpenAIStub() as stub:
        subject, judge = entries(f"{stub.base_url}/v1", batch=True, batch_size=60)
        result = engine_run(tmp_path / "run", (subject,), judges=(judge,))
        stats = stub.stats()
    assert result.complete and result.failed == 0
    assert_same_at_half_the_price(live, run_records(tmp_path / "run"))
    assert stats["live_calls"] == 0 and stats["preflight"] == 2  # one pre-flight call a model
    assert stats["submitted_twice"] == 0 and stats["batch_requests"] == result.totals.calls
    assert stats["batches"] >= stats["batch_requests"] / 60  # none over the size asked for
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None
    assert sum(e.batch_calls for e in ledger.entries) == sum(e.calls for e in ledger.entries)
    live_cost = sum(r["cost_usd"] for r in live.values())
    assert sum(e.cost_usd for e in ledger.entries) == pytest.approx(live_cost / 2)
    lines = journal(tmp_path / "run")
    assert len([x for x in lines if x.event == "submitted"]) == stats["batches"]
    assert all(x.keys == () for x in lines if x.event == "ended")  # every request answered


def test_anthropic_message_batches_with_thinking(tmp_path: Path) -> None:
    def claude(url: str, batch: bool) -> tuple[ModelEntry, ModelEntry]:
        options = {"batch": True, "options": FAST} if batch else {}
        subject = ModelEntry.model_validate(
            {
                "name": "claude",
                "spec": "anthropic/claude-sonnet-4-5",
                "base_url": url,
                "price": {"input": 3.0, "output": 15.0},
                "params": {"max_tokens": 800, "thinking_budget": 1024},
                **options,
            }
        )
        judge = ModelEntry.model_validate(
            {"name": "haiku", "spec": "anthropic/claude-haiku-4-5", "base_url": url, **options}
        )
        return subject, judge

    tasks = ("emotion", "response")
    with AnthropicStub() as stub:
        subject, judge = claude(stub.base_url, batch=False)
        engine_run(tmp_path / "live", (subject,), judges=(judge,), tasks=tasks, limit=4)
        subject, judge = claude(stub.base_url, batch=True)
        result = engine_run(tmp_path / "batch", (subject,), judges=(judge,), tasks=tasks, limit=4)
        stats = stub.stats()
    assert result.complete
    live, batch = run_records(tmp_path / "live"), run_records(tmp_path / "batch")
    assert_same_at_half_the_price(live, batch)
    assert all(r["thinking"] for r in batch.values())  # kept from the batch's messages
    assert stats["submitted_twice"] == 0 and stats["batch_requests"] == sum(stats["live"].values())


def test_an_expired_batch_and_failed_lines_fail_their_items_until_a_resume(
    live: Records, tmp_path: Path
) -> None:
    tasks = ("emotion", "behavior")
    out = tmp_path / "run"
    with OpenAIStub() as stub:
        stub.expire, stub.expire_answered, stub.fail_every = {1}, 0.6, 9
        subject, _ = entries(f"{stub.base_url}/v1", batch=True)
        first = engine_run(out, (subject,), tasks=tasks)
        expired, failed_lines = stub.stats()["expired"], stub.stats()["failed_lines"]
        records = read_records(out / "records.jsonl")
        stub.expire, stub.fail_every = set(), 0
        second = engine_run(out, (subject,), tasks=tasks)
        stats = stub.stats()
    assert expired > 10 and failed_lines > 3
    assert not first.complete and first.failed == expired + failed_lines
    failed = [r for r in records if r.status == "failed"]
    assert sum("batch_expired" in str(r.error) for r in failed) == expired
    assert sum("HTTP 500 in batch" in str(r.error) for r in failed) == failed_lines
    assert not any(r.permanent for r in failed)  # retried on resume, not given up
    [ended] = [x for x in journal(out) if x.event == "ended"][:1]
    assert ended.status == "expired" and len(ended.keys) == expired + failed_lines
    assert second.complete and stats["batches"] == 2 and stats["live_calls"] == 0
    assert sorted(stats["submitted"].values()).count(2) == expired + failed_lines  # sent again
    assert stats["submitted_twice"] == expired + failed_lines  # and nothing else was
    wanted = {key: record for key, record in live.items() if key[0] in tasks}
    assert_same_at_half_the_price(wanted, run_records(out))


def _cli() -> list[str]:
    """The command line with the test run's tasks (the toy task too), as `live` ran them."""
    return cli_command()


def _models_file(path: Path, url: str) -> Path:
    def table(name: str, fields: dict[str, Any]) -> str:
        price = fields["price"]
        lines = [
            f"[models.{name}]",
            f'spec = "{fields["spec"]}"',
            f'base_url = "{url}"',
            'api = "openai"',
            "batch = true",
            f"price = {{ input = {price['input']}, output = {price['output']} }}",
            "options = { batch_poll_s = 0.02, batch_quiet_s = 0.1, batch_size = 60 }",
        ]
        if "params" in fields:
            lines.append('params = { max_tokens = 4000, reasoning_effort = "low" }')
        return "\n".join(lines) + "\n"

    path.write_text(table("subject", SUBJECT) + table("judge", JUDGE), encoding="utf-8")
    return path


def _wait(condition: Callable[[], bool], process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        assert process.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_a_batch_run_killed_mid_way_resumes_by_polling_its_batches(
    live: Records, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with OpenAIStub() as stub:
        command = [
            *_cli(),
            "run",
            "--data",
            str(sample_path()),
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache.sqlite"),
            "--no-progress",
            "--models-file",
            str(_models_file(tmp_path / "models.toml", f"{stub.base_url}/v1")),
            "--model",
            "subject",
            "--judge",
            "judge",
        ]
        log = (tmp_path / "cli.log").open("wb")
        stub.hold_batches()
        process = subprocess.Popen(command, stdout=log, stderr=log, env=cli_env())
        try:
            submitted = lambda: sum(x.event == "submitted" for x in journal(out))  # noqa: E731
            _wait(lambda: submitted() >= 4, process, "four batches")
            stub.release_batches(upto=2)  # two batches end; the rest stay in progress
            _wait(lambda: _lines(out / "records.jsonl") >= 60, process, "60 records")
            stub.hold_creates()  # no batch can be made now that the run does not know of
            _wait(lambda: submitted() == stub.stats()["batches"], process, "the journal")
            os.kill(process.pid, signal.SIGKILL)
            process.wait(30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(30)
        at_kill = journal(out)
        recorded_at_kill = _lines(out / "records.jsonl")
        stub.release_creates()
        stub.release_batches()
        resumed = subprocess.run(
            command, stdout=log, stderr=log, timeout=240, check=False, env=cli_env()
        )
        log.close()
        stats = stub.stats()
    assert resumed.returncode == 0, (tmp_path / "cli.log").read_text()[-2000:]
    in_progress = {x.batch_id for x in at_kill if x.event == "submitted"} - {
        x.batch_id for x in at_kill if x.event == "ended"
    }
    assert in_progress and 60 <= recorded_at_kill < len(live)  # killed mid-way
    assert stats["submitted_twice"] == 0 and stats["live_calls"] == 0  # nothing paid twice
    assert stats["batch_requests"] == stats["answered_in_batches"]
    final = journal(out)
    resubmitted = {x.batch_id for x in final if x.event == "submitted"} & in_progress
    assert resubmitted == in_progress  # polled again, under the ids the killed run had
    assert len([x for x in final if x.event == "submitted"]) == stats["batches"]
    assert_same_at_half_the_price(live, run_records(out))


def test_batch_counts_for_the_progress_bar() -> None:
    from attunebench.engine.progress import batch_text
    from attunebench.models.base import BatchCounts

    counts = BatchCounts(1, 2, 1, 1) + BatchCounts(3, 1, 0, 1)
    assert batch_text(counts) == "batches 3 submitted, 1 in progress, 2 done, 4 queued"
    assert batch_text(None) == ""


def test_batch_entries_raise_concurrency_apart_from_live_ones() -> None:
    batch, _ = entries("http://127.0.0.1:1/v1", batch=True)
    plain, _ = entries("http://127.0.0.1:1/v1", batch=False)
    assert batch.endpoint_concurrency(16) >= 50_000 and plain.endpoint_concurrency(16) == 16
    assert batch.cache_identity() == plain.cache_identity()  # one cache for both


async def test_a_kill_between_creating_a_batch_and_journalling_it_pays_nothing_twice(
    tmp_path: Path,
) -> None:
    import aiohttp

    from attunebench.models import GenerateParams, Message
    from attunebench.models.batch_journal import Journal
    from attunebench.models.batching import request_key
    from attunebench.models.openai_batch import OpenAIBatches
    from attunebench.models.openai_compat import OpenAICompatProvider

    messages = [Message("user", "Say hello in JSON.")]
    params = GenerateParams(max_tokens=2000, json_mode=True)
    with OpenAIStub() as stub:
        url = f"{stub.base_url}/v1"
        model = OpenAICompatProvider("gpt-5-mini", base_url=url, api="openai", batch=True, **FAST)
        request = model.request_body(messages, params)
        key = request_key(request)
        async with aiohttp.ClientSession() as session:  # the run that is killed
            api = OpenAIBatches(url, lambda: session)
            file_id = await api.prepare([(key, request)])
            journal = Journal(model.spec, tmp_path / JOURNAL_FILE)
            journal.record("prepared", "", [key], "prepared", file_id)
            await api.submit([(key, request)], file_id)  # it dies before journalling the id
        model.attach(tmp_path)  # the resumed run
        output = await model.generate(messages, params)
        await model.aclose()
        stats = stub.stats()
    assert output.text and output.batched
    assert stats["batches"] == 1 and stats["submitted_twice"] == 0 and stats["live_calls"] == 0
