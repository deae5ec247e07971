"""`run --ray` on a local Ray of 2 CPUs, started once for the module and stopped after it (no
Ray process of the module's left running): three shards as Ray tasks, merged, equal a
single-process run record for record; a shard that fails is tried again; one that fails for
good leaves the others kept, and the same command resumes without repeating their calls.
What the driver's pre-flight found makes the shards' models without a call; a shard whose
`hf/` model runs on CUDA asks for a GPU. (The fault drills: test_ray_drills.py.)"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest
import ray
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data.sample import sample_path
from attunebench.engine import RUN_FILE, ResponseCache, RunConfig, read_ledger, read_run_info
from attunebench.engine.shards import Shard
from attunebench.engine.wiring import (
    Found,
    bind_models,
    close_models,
    preflight_found,
    preflight_models,
)
from attunebench.models.base import Message
from attunebench.models.capabilities import Capabilities
from attunebench.models.modelsfile import ModelEntry
from attunebench.on_ray.book import SHARDS_DIR, ShardBook, shard_dir
from attunebench.on_ray.inbox import Letter
from attunebench.on_ray.launch import (
    RayOptions,
    RayRunError,
    Shards,
    ShardsFailed,
    computes_here,
    run_on_ray,
    task_options,
)
from attunebench.on_ray.progress import Board
from attunebench.on_ray.shard import CACHE_FILE, ShardJob, ShardOutcome, reporter, run_shard
from attunebench.records import Ledger, LedgerEntry
from attunebench.rundir import LEDGER_FILE
from testkit.records import diff_records, run_records

pytestmark = pytest.mark.timeout(240)
MODELS = ["--model", "mock/default", "--model", "baseline/random"]
TASKS = ["--task", "emotion", "--task", "rating"]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    """A local Ray of 2 CPUs for the module; every process it started is gone after it."""
    # Children already there (a session's llama.cpp servers, say) are not Ray's to stop.
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    pickled = ray.cloudpickle.register_pickle_by_value  # the flaky tasks below, by value
    pickled(sys.modules[__name__])  # type: ignore[no-untyped-call]
    started = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    try:
        yield ray
    finally:
        ray.shutdown()
        _, alive = psutil.wait_procs(started, timeout=20)
        for process in alive:  # only what this module's Ray started
            process.kill()
        assert not alive, [p.pid for p in alive]


def cli(out: Path, *extra: str) -> tuple[int, str]:
    args = ["run", "--data", str(sample_path()), *MODELS, *TASKS, "--no-progress"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), *extra])
    return result.exit_code, result.output


def test_three_ray_shards_equal_a_single_process_run(local_ray: Any, tmp_path: Path) -> None:
    code, output = cli(tmp_path / "single", "--no-cache")
    assert code == 0, output
    cache = tmp_path / "cache.sqlite"
    code, output = cli(tmp_path / "ray", "--ray", "--ray-shards", "3", "--cache", str(cache))
    assert code == 0, output
    single, merged = run_records(tmp_path / "single"), run_records(tmp_path / "ray")
    assert single and diff_records(single, merged) == []
    info, whole = read_run_info(tmp_path / "ray"), read_run_info(tmp_path / "single")
    assert info is not None and whole is not None
    assert info.complete and info.shard is None and info.planned_items == whole.planned_items
    assert info.dataset == str(sample_path())
    folders = sorted((tmp_path / "ray" / SHARDS_DIR).iterdir())
    assert [f.name for f in folders] == ["1-of-3", "2-of-3", "3-of-3"]
    own = [len(ResponseCache(folder / CACHE_FILE)) for folder in folders]  # one cache a shard
    assert all(own) and len(ResponseCache(cache)) == sum(own)  # merged into the run's cache
    assert f"{len(single)}/{len(single)} items recorded" in output


def flaky(job: ShardJob, data: bytes, report: Any, inbox: Any) -> ShardOutcome:
    """Shard 2 fails as many times as `fails` says (in the run's folder), then runs."""
    attempts = job.config.out.parent / f"attempts-{job.shard.index}"
    tried = int(attempts.read_text()) if attempts.exists() else 0
    attempts.write_text(str(tried + 1))
    fails = int((job.config.out.parent / "fails").read_text())
    if job.shard.index == 2 and tried < fails:
        raise RuntimeError(f"shard 2 lost its machine (try {tried + 1})")
    return run_shard(job, data, report, inbox)


def config(out: Path) -> RunConfig:
    models = tuple(ModelEntry.from_spec(spec) for spec in ("mock/default", "baseline/random"))
    return RunConfig(
        data=sample_path(),
        out=out,
        models=models,
        tasks=("emotion",),
        cache_path=None,
        progress=False,
    )


def test_a_failed_shard_is_retried_and_one_failed_for_good_resumes(
    local_ray: Any, tmp_path: Path
) -> None:
    (tmp_path / "fails").write_text("1")
    result = run_on_ray(config(tmp_path / "retried"), RayOptions(shards=3), task=flaky)
    assert result.complete and (tmp_path / "attempts-2").read_text() == "2"  # Ray retried it
    (tmp_path / "fails").write_text("99")
    lost = config(tmp_path / "lost")
    with pytest.raises(ShardsFailed) as failed:
        run_on_ray(lost, RayOptions(shards=3, retries=1), task=flaky)
    said = str(failed.value)
    assert said.startswith("shard 2/3 failed for good: RuntimeError: shard 2 lost its machine")
    assert "\n" not in said and said.endswith("run the same command to resume")
    kept = {i: run_records(shard_dir(lost.out, Shard(i, 3))) for i in (1, 3)}
    assert all(kept.values()) and not (lost.out / RUN_FILE).exists()
    resumed = run_on_ray(lost, RayOptions(shards=3))  # the same command, now that it can run
    assert resumed.complete
    redone = run_records(shard_dir(lost.out, Shard(2, 3)))
    assert resumed.totals.calls == len(redone)  # the kept shards made no call again
    for i in (1, 3):
        assert diff_records(kept[i], run_records(shard_dir(lost.out, Shard(i, 3)))) == []
    assert diff_records(run_records(tmp_path / "retried"), run_records(lost.out)) == []
    with pytest.raises(RayRunError, match="holds 3 shards; resume it with --ray-shards 3"):
        run_on_ray(lost, RayOptions(shards=2))  # cut otherwise, its shards would be asked again


def test_the_progress_board_totals_every_shard(local_ray: Any) -> None:
    board = Board.start(local_ray)
    for index, done, planned in [(1, 2, 5), (2, 3, 4), (1, 5, 5)]:  # shard 1 retried: afresh
        board(index, done, planned)
    assert board.totals(local_ray) == (8, 9)
    board.stop(local_ray)
    told: list[tuple[int, int, int]] = []
    report = reporter(lambda *counts: told.append(counts), Shard(2, 3))
    assert report is not None
    for done in range(1, 101):
        report(done, 100)
    assert told[0] == (2, 1, 100) and told[-1] == (2, 100, 100) and len(told) < 10


def test_ray_options_that_do_not_fit_are_refused_in_one_line(
    local_ray: Any, tmp_path: Path
) -> None:
    for extra, said in [
        (["--ray-shards", "2"], "--ray-shards go with --ray"),
        (["--ray", "--shard", "1/2"], "drop --shard"),
    ]:
        code, output = cli(tmp_path / "r", *extra)
        lines = [line for line in output.splitlines() if line.strip()]
        assert code == 2 and len(lines) == 1 and said in lines[0], output
    code, _ = cli(tmp_path / "plain", "--no-cache", "--limit", "1")
    assert code == 0
    code, output = cli(tmp_path / "plain", "--ray", "--no-cache", "--limit", "1")
    assert code == 2 and "made without --ray" in output
    assert replace(RayOptions(), shards=2).address == "auto"


async def test_what_the_drivers_preflight_found_makes_a_shards_model_without_a_call() -> None:
    # Port 9 (discard) answers nothing: a model that probed or read /models would fail.
    entry = ModelEntry(name="m", spec="openai/m", base_url="http://127.0.0.1:9/v1")
    found = {
        "m": Found(
            capabilities=Capabilities(sampling=False, logprobs=False).model_dump(mode="json"),
            adapted={"temperature": "dropped"},
        )
    }
    asked = [Message("user", "hi")]
    plain = await bind_models([entry], concurrency=1, overrides={}, check=False)
    carried = await bind_models([entry], concurrency=1, overrides={}, check=False)
    try:
        await preflight_models(carried, found)
        assert "temperature" in plain["m"].provider.request_body(asked, entry.params)  # type: ignore[attr-defined]
        body = carried["m"].provider.request_body(asked, entry.params)  # type: ignore[attr-defined]
        assert "temperature" not in body  # the adaptation the driver's pre-flight made
        assert preflight_found(carried) == found
    finally:
        await close_models(plain)
        await close_models(carried)


class Submissions:
    """Ray as the driver submits to it, on a cluster that reports a GPU (CUDA mocked): the
    options each remote function is given, kept. What it makes is itself."""

    def __init__(self) -> None:
        self.given: list[dict[str, Any]] = []

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 4.0, "GPU": 1.0}

    def put(self, value: bytes) -> bytes:
        return value

    def remote(self, *function: Any, **options: Any) -> Any:
        return self if function else lambda actor: self  # ray.remote(f) / ray.remote(**o)(A)

    def options(self, **given: Any) -> Submissions:
        self.given.append(given)
        return self


def test_a_shard_whose_hf_model_runs_on_cuda_is_submitted_asking_for_a_gpu(
    tmp_path: Path,
) -> None:
    hf = ModelEntry(name="small", spec="hf/models/small")
    submitted = Submissions()
    Shards(submitted, replace(config(tmp_path), models=(hf,)), RayOptions(), run_shard, None)
    assert submitted.given == [{"num_cpus": 1, "num_gpus": 1, "max_retries": 0}]


def test_a_shard_whose_hf_model_runs_on_cuda_asks_for_a_gpu(tmp_path: Path) -> None:
    def options(options: dict[str, Any], cluster: dict[str, float]) -> dict[str, Any]:
        hf = ModelEntry(name="small", spec="hf/models/small", options=options)
        return task_options(replace(config(tmp_path), models=(hf,)), cluster)

    cpu_only, with_gpu = {"CPU": 4.0}, {"CPU": 4.0, "GPU": 1.0}  # what Ray reports: CUDA mocked
    assert options({"device": "cuda:0"}, cpu_only)["num_gpus"] == 1
    assert options({}, with_gpu) == {"num_cpus": 1, "num_gpus": 1, "max_retries": 0}
    assert options({}, cpu_only)["num_gpus"] == 0  # it will take the CPU it finds
    assert options({"device": "cpu"}, with_gpu)["num_gpus"] == 0
    assert task_options(config(tmp_path), with_gpu)["num_gpus"] == 0  # mock and baseline


class NoCluster:
    """Ray as `auto` finds it on a machine where no cluster runs."""

    exceptions = ray.exceptions

    def is_initialized(self) -> bool:
        return False

    def init(self, address: str, **options: Any) -> None:
        raise ConnectionError("Could not find any running Ray instance.")


def test_without_a_cluster_or_a_model_computing_here_the_run_goes_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("attunebench.on_ray.launch._import_ray", NoCluster)
    said: list[str] = []
    result = run_on_ray(config(tmp_path / "run"), RayOptions(), say=said.append)
    assert result.complete and result.totals.calls == result.planned > 0
    assert not (tmp_path / "run" / SHARDS_DIR).exists()  # an ordinary run directory
    assert said[-1].startswith("--ray: no Ray cluster runs here") and "\n" not in said[-1]
    hf = ModelEntry(name="small", spec="hf/models/small")
    assert computes_here(replace(config(tmp_path), models=(hf,)))  # there, a local Ray pays


def test_a_cluster_out_of_reach_is_said_in_one_line_with_token_authentication_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What Ray 2.60 says, after some 20 s, to a driver without the cluster's token.
    monkeypatch.setattr("attunebench.on_ray.launch._import_ray", NoCluster)
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    with pytest.raises(RayRunError) as refused:
        run_on_ray(config(tmp_path / "run"), RayOptions(address="10.0.0.9:6379"))
    said = str(refused.value)
    assert said.startswith("--ray-address 10.0.0.9:6379: Could not find any running Ray")
    assert "RAY_AUTH_MODE=token" in said and "\n" not in said
    assert not (tmp_path / "run").exists()  # nothing written


def test_a_shards_ledger_is_its_tries_newest_words_over_what_earlier_commands_counted(
    tmp_path: Path,
) -> None:
    def ledger(calls: int, lost: int) -> Ledger:
        entry = LedgerEntry(model="m", task="t", role="subject", calls=calls, lost=lost)
        return Ledger(entries=[entry])

    def counted(book: ShardBook) -> tuple[int, int]:
        book.write()
        (entry,) = read_ledger(book.folder).entries  # type: ignore[union-attr]
        return entry.calls, entry.lost

    run = config(tmp_path / "run")
    shard = Shard(1, 2)
    shard_dir(run.out, shard).mkdir(parents=True)
    (shard_dir(run.out, shard) / LEDGER_FILE).write_text(ledger(5, 1).model_dump_json())
    book = ShardBook(run, shard)  # an earlier command counted 5 calls and 1 lost
    newer, older = ledger(3, 1).model_dump(mode="json"), ledger(2, 1).model_dump(mode="json")
    book.take(Letter(1, attempt=1, seq=2, ledger=newer))
    book.take(Letter(1, attempt=1, seq=1, ledger=older))  # run late by the actor
    assert counted(book) == (8, 2)
    book.take(Letter(1, attempt=2, seq=1, ledger=ledger(4, 0).model_dump(mode="json")))
    assert counted(book) == (12, 2)  # a try lost with 1 call on the wire, and its retry
    final = {LEDGER_FILE: ledger(6, 0).model_dump_json().encode()}
    book.keep(run, ShardOutcome(shard, 2, final))
    book.take(Letter(1, attempt=2, seq=9, ledger=ledger(4, 1).model_dump(mode="json")))
    assert counted(book) == (14, 2)  # the finished try's own ledger is its last word
    assert book.session().calls == 9 and book.session().lost == 1  # this command's tries
    book.close()
