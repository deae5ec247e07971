"""The response cache: content keys, JSON values in SQLite WAL, hits on re-run, judges too."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest
from engine_harness import RunFn

from attunebench.answerform import FORMS, TaskHint
from attunebench.engine import ResponseCache, cache_key, read_ledger, read_records
from attunebench.engine.cache import CacheWriteError
from attunebench.models import GenerateParams, Message, MockProvider, ModelOutput, ProviderError
from attunebench.models.modelsfile import ModelEntry
from attunebench.records import PromptInfo
from attunebench.tasks import load_tasks

PROMPT = PromptInfo(id="p", version="1")


def key(**changes: object) -> str:
    base: dict[str, object] = {
        "identity": ModelEntry(name="m", spec="openai/x").cache_identity(),
        "messages": [Message("user", "hi")],
        "params": GenerateParams(),
        "prompt": PROMPT,
        "item_key": "task|c|0|i|",
        "hint": None,
    }
    base.update(changes)
    return cache_key(**base)  # type: ignore[arg-type]


def test_key_changes_with_everything_that_changes_the_output() -> None:
    moved = ModelEntry(
        name="other",
        spec="openai/x",
        base_urls=("http://b/v1",),
        concurrency=3,
        options={"timeout_s": 1},
    )
    assert key(identity=moved.cache_identity()) == key()  # name, URLs, pacing: same output
    assert key(params=GenerateParams(temperature=0.5)) != key()
    assert key(prompt=PromptInfo(id="p", version="2")) != key()
    assert key(messages=[Message("user", "hi!")]) != key()
    assert key(item_key="task|c|1|i|") != key()
    served = ModelEntry(name="m", spec="openai/x", identity="q4_k_m").cache_identity()
    assert key(identity=served) != key()
    assert len(key()) == 64 and key() == key()


def test_a_constrained_model_keys_on_its_answer_schema() -> None:
    load_tasks()
    rubric = TaskHint(kind="judge_rubric", candidates={"A": "x"}, form=FORMS.get("judge_rubric"))
    tied = ModelEntry(name="m", spec="openai/x", json_schema=True).cache_identity()
    assert key(identity=tied, hint=rubric) != key(hint=rubric)  # constrained or free
    # The schema itself, not only the setting: a form whose schema changed is asked again.
    changed = dataclasses.replace(rubric, form=FORMS.get("judge_pairwise"))
    assert key(identity=tied, hint=changed) != key(identity=tied, hint=rubric)
    assert key(hint=changed) == key(hint=rubric)  # a free model is not sent the schema


def test_the_judged_model_named_in_a_hint_is_not_in_the_key() -> None:
    # A verdict on a text does not depend on who wrote it; family or favour are not asked.
    hint = TaskHint(kind="judge_pairwise", candidates={"A": "x", "B": "y"})
    assert key(hint=dataclasses.replace(hint, subject="model-a")) == key(hint=hint)
    assert key(hint=dataclasses.replace(hint, candidates={"A": "y", "B": "x"})) != key(hint=hint)


def test_values_are_json_in_a_wal_database(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", ModelOutput(text="héllo", input_tokens=3, output_tokens=1), cost_usd=0.5)
    hit = cache.get("k")
    assert hit is not None and hit.text == "héllo" and hit.cost_usd == 0.5
    assert cache.get("other") is None and len(cache) == 1
    cache.close()
    db = sqlite3.connect(tmp_path / "c.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert json.loads(db.execute("SELECT value FROM responses").fetchone()[0])["input_tokens"] == 3


def test_a_put_is_found_at_once_and_kept_after_close(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    for n in range(200):  # the writer thread commits them in batches, behind the caller
        cache.put(f"k{n}", ModelOutput(text=str(n)), cost_usd=0.0)
        hit = cache.get(f"k{n}")
        assert hit is not None and hit.text == str(n)
    cache.close()
    again = ResponseCache(tmp_path / "c.sqlite")
    assert len(again) == 200
    hit = again.get("k199")
    assert hit is not None and hit.text == "199"
    again.close()


def test_a_failed_write_is_raised_not_lost(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    sqlite3.connect(tmp_path / "c.sqlite").execute("DROP TABLE responses")
    cache.put("k", ModelOutput(text="x"), cost_usd=0.0)
    with pytest.raises(CacheWriteError, match="no such table"):
        cache.flush()
    with pytest.raises(CacheWriteError):
        cache.close()


async def test_a_rerun_is_all_cache_hits_for_models_and_judges(
    run_echo: RunFn, tmp_path: Path
) -> None:
    first, judge = MockProvider(), MockProvider("judge")
    await run_echo({"m": first}, judges={"j": judge}, out=tmp_path / "one")
    assert first.calls == 12 and judge.calls == 12

    again, judge_again = MockProvider(), MockProvider("judge")
    result = await run_echo({"m": again}, judges={"j": judge_again}, out=tmp_path / "two")
    assert again.calls == 0 and judge_again.calls == 0 and result.complete
    records = read_records(result.rundir / "records.jsonl")
    assert all(r.cache_hits == 2 and r.calls == 2 for r in records)
    ledger = read_ledger(result.rundir)
    assert ledger is not None
    assert {(e.role, e.calls, e.cache_hits) for e in ledger.entries} == {
        ("subject", 0, 12),
        ("judge", 0, 12),
    }


async def test_only_successes_are_cached(run_echo: RunFn, tmp_path: Path) -> None:
    bad = ProviderError("bad", retryable=False, status=400)
    await run_echo({"m": MockProvider(failures={"echo|c0|0|reply|": [bad]})}, out=tmp_path / "a")
    healthy = MockProvider()
    await run_echo({"m": healthy}, out=tmp_path / "b")
    assert healthy.calls == 1 and healthy.calls_by_key == {"echo|c0|0|reply|": 1}


async def test_no_cache_means_every_call_goes_out(run_echo: RunFn, tmp_path: Path) -> None:
    first, second = MockProvider(), MockProvider()
    await run_echo({"m": first}, out=tmp_path / "a", cache_path=None)
    await run_echo({"m": second}, out=tmp_path / "b", cache_path=None)
    assert first.calls == second.calls == 12
