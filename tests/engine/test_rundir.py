"""What a run writes: run.json provenance, one record per item, and a ledger with real figures."""

from __future__ import annotations

import hashlib
from pathlib import Path

from echo_task import JUDGE_PROMPT, PROMPT
from engine_harness import RunFn

from attunebench import __version__
from attunebench.engine import read_ledger, read_records, read_run_info
from attunebench.models import MockProvider, ProviderError
from attunebench.models.modelsfile import ModelEntry, Price
from attunebench.records import ItemRecord
from attunebench.rundir import RecordWriter


async def test_run_json_records_and_ledger(run_echo: RunFn, dataset: Path) -> None:
    mock, judge = MockProvider(latency_s=0.001), MockProvider("judge")
    priced = ModelEntry(
        name="m", spec="mock/default", price=Price(input=1.0, output=2.0), params={"max_tokens": 64}
    )
    result = await run_echo({"m": mock}, judges={"j": judge}, entries={"m": priced}, seed=3)
    info = read_run_info(result.rundir)
    assert info is not None and info.complete and info.finished_at is not None
    assert info.package_version == __version__
    assert info.dataset_sha256 == hashlib.sha256(dataset.read_bytes()).hexdigest()
    assert info.dataset_ids == ["engine-test"] and info.tasks == ["echo"] and info.seed == 3
    assert [(m.name, m.spec, m.kind, m.role) for m in info.models] == [
        ("m", "mock/default", "mock", "subject")
    ]
    assert info.models[0].params == {"max_tokens": 64}
    assert [j.role for j in info.judges] == ["judge"]
    assert info.prompts == sorted([PROMPT.info, JUDGE_PROMPT.info], key=lambda p: (p.id, p.version))
    assert info.planned_items == 12

    records = read_records(result.rundir / "records.jsonl")
    assert len(records) == 12 and all(r.calls == 2 and r.model == "m" for r in records)
    assert all(r.input_tokens > 0 and r.cost_usd > 0 for r in records)

    ledger = read_ledger(result.rundir)
    assert ledger is not None
    by_role = {e.role: e for e in ledger.entries}
    subject = by_role["subject"]
    assert (subject.model, subject.task, subject.calls) == ("m", "echo", 12)
    expected = (subject.input_tokens * 1.0 + subject.output_tokens * 2.0) / 1e6
    assert abs(subject.cost_usd - expected) < 1e-12 and subject.latency_s > 0
    assert by_role["judge"].model == "j" and by_role["judge"].cost_usd == 0


async def test_the_ledger_totals_every_session(run_echo: RunFn) -> None:
    bad = ProviderError("bad", retryable=False, status=404)
    await run_echo({"m": MockProvider(failures={"echo|c0|1|reply|": [bad]})})
    result = await run_echo({"m": MockProvider()})
    ledger = read_ledger(result.rundir)
    assert ledger is not None and len(ledger.entries) == 1
    entry = ledger.entries[0]
    assert (entry.calls, entry.failures, entry.cache_hits) == (12, 1, 0)


def test_record_writer_appends_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path, fsync_every_s=0)
    for turn in range(3):
        writer.write(
            ItemRecord(
                task="t", model="m", conversation_id="c", turn_index=turn, item_id="i", status="ok"
            )
        )
        assert path.read_bytes().count(b"\n") == turn + 1  # on disk before the next write
    writer.close()
    assert [r.turn_index for r in read_records(path)] == [0, 1, 2]
