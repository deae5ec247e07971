"""`local/NAME`: a run starts the model's server with its verified file and stops it by its PID
when the run ends, fails or is interrupted; a file that does not match its pin, an unknown
name, or a base model in generate mode stops the run in one line before any server starts.
The server here is fake_llama_server.py standing in for llama-server, over a tiny model file."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from local_harness import FakeServers, alive, fake_servers

from attunebench.data.sample import sample_path
from attunebench.engine import (
    RunConfig,
    RunDirError,
    merge_shards,
    parse_shard,
    read_ledger,
    read_records,
    run,
)
from attunebench.engine.wiring import bind_models, close_models
from attunebench.models.llamacpp_server import LocalProvider
from attunebench.models.local_models import LOCAL_MODELS, QWEN
from attunebench.models.modelsfile import (
    ModelEntry,
    ModelsFileError,
    load_models_file,
    models_file_text,
)
from attunebench.models.registry import ProviderConfigError, make_provider
from attunebench.records import ServerUsage
from testkit.local_entry import local_entry

ROOT = Path(__file__).parents[2]


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeServers:
    return fake_servers(tmp_path, monkeypatch)


def entry(name: str = "tiny-test", **fields: object) -> ModelEntry:
    return ModelEntry.model_validate(
        {"name": "tiny", "spec": f"local/{name}", "answer": "choice", **fields}
    )


def config(tmp_path: Path, *entries: ModelEntry, out: str = "run") -> RunConfig:
    return RunConfig(
        data=sample_path(),
        out=tmp_path / out,
        models=entries or (entry(),),
        tasks=("outcome",),
        limit=2,
        cache_path=None,
        progress=False,
    )


async def test_a_run_starts_the_server_and_stops_it_by_its_pid(
    fake: FakeServers, tmp_path: Path
) -> None:
    result = await run(config(tmp_path))
    assert result.complete and result.failed == 0
    [pid] = fake.pids()  # one server, for the whole run
    assert not alive(pid)
    records = read_records(tmp_path / "run" / "records.jsonl")
    assert records and all(r.mode == "choice" and r.status == "ok" for r in records)
    assert list((tmp_path / "logs").iterdir()) == []  # stopped as planned: no log kept


async def test_the_servers_own_accounting_goes_into_the_ledger(
    fake: FakeServers, tmp_path: Path
) -> None:
    """Each answer carries the fake's timings (30 prompt tokens evaluated, 70 from the cache,
    300 ms + 5 ms): the sums are those times the answers, the probes included."""
    await run(config(tmp_path))
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None
    usage = ledger.servers["tiny"]
    calls = sum(e.calls for e in ledger.entries)
    probes = 2  # the pre-flight's generate call and its choice call
    assert usage.requests == calls + probes and usage.sessions == 1
    assert (usage.prompt_n, usage.cache_n) == (30 * usage.requests, 70 * usage.requests)
    assert usage.prompt_ms == pytest.approx(300.0 * usage.requests)
    assert usage.cached_share() == pytest.approx(0.7)
    busy_s = (usage.prompt_ms + usage.predicted_ms) / 1000
    assert usage.up_s > 0 and usage.busy_share() == pytest.approx(busy_s / usage.up_s)


async def test_a_resumed_run_adds_its_server_to_the_ledgers(
    fake: FakeServers, tmp_path: Path
) -> None:
    first = await run(config(tmp_path))
    before = read_ledger(tmp_path / "run")
    assert before is not None and first.complete
    await run(config(tmp_path))  # nothing left to answer: only the server's start and probes
    after = read_ledger(tmp_path / "run")
    assert after is not None
    was, now = before.servers["tiny"], after.servers["tiny"]
    assert now.sessions == 2 and now.requests == was.requests + 2
    assert now.up_s > was.up_s
    assert len(fake.pids()) == 2 and not any(alive(pid) for pid in fake.pids())


async def test_merged_shards_add_up_their_servers(fake: FakeServers, tmp_path: Path) -> None:
    for i in (1, 2):
        shard = dataclasses.replace(config(tmp_path, out=f"shard{i}"), shard=parse_shard(f"{i}/2"))
        assert (await run(shard)).complete
    merge_shards([tmp_path / "shard1", tmp_path / "shard2"], tmp_path / "merged")
    ledgers = [read_ledger(tmp_path / name) for name in ("shard1", "shard2", "merged")]
    first, second, merged = (ledger.servers["tiny"] for ledger in ledgers if ledger is not None)
    assert merged == first.plus(second) and merged.sessions == 2


async def test_a_failing_run_stops_its_server(fake: FakeServers, tmp_path: Path) -> None:
    """A RUNDIR holding another plan is refused after the models are bound (servers up)."""
    await run(config(tmp_path))
    other = config(tmp_path)
    with pytest.raises(RunDirError):
        await run(dataclasses.replace(other, tasks=("emotion",)))
    assert len(fake.pids()) == 2 and not any(alive(pid) for pid in fake.pids())


async def test_an_interrupted_run_stops_its_server(
    fake: FakeServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_DELAY", "0.2")  # each answer: the run is still going
    many = dataclasses.replace(config(tmp_path), tasks=("emotion",), limit=None)
    running = asyncio.create_task(run(many))
    while not (tmp_path / "run" / "records.jsonl").exists():
        await asyncio.sleep(0.05)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    [pid] = fake.pids()
    assert not alive(pid)


async def test_a_server_that_exits_at_start_is_one_line_and_no_process(
    fake: FakeServers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_EXIT", "3")
    with pytest.raises(ProviderConfigError) as refused:
        await run(config(tmp_path))
    assert "exited at start" in str(refused.value) and "\n" not in str(refused.value)
    log = Path(str(refused.value).rsplit("see ", 1)[1])
    assert log.exists()  # kept, for the reason
    assert not (tmp_path / "run").exists()


async def test_a_file_that_does_not_match_its_pin_starts_nothing(
    fake: FakeServers, tmp_path: Path
) -> None:
    path = fake.model.path()
    path.write_bytes(path.read_bytes().replace(b"two", b"tw0"))
    with pytest.raises(ModelsFileError) as refused:  # "models.tiny: " and the file's line
        await run(config(tmp_path))
    message = str(refused.value)
    assert str(path) in message and fake.model.sha256 in message and "\n" not in message
    assert fake.pids() == [] and not (tmp_path / "run").exists()


def test_the_cli_refuses_a_mismatched_file_in_one_line(fake: FakeServers, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attunebench.cli import app

    path = fake.model.path()
    path.write_bytes(path.read_bytes().replace(b"one", b"0ne"))
    args = ["run", "--data", sample_path(), "--model", "local/tiny-test", "--task", "outcome"]
    args += ["--out", tmp_path / "run", "--no-cache", "--no-progress"]
    result = CliRunner().invoke(app, [str(arg) for arg in args])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and fake.model.sha256 in lines[0]
    assert fake.pids() == []


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"answer": "generate"}, "base model with no chat template"),
        ({"options": {"chat": True}}, "no chat template"),
    ],
)
async def test_a_base_model_is_refused_in_generate_mode(
    fake: FakeServers, tmp_path: Path, fields: dict[str, object], says: str
) -> None:
    with pytest.raises(ModelsFileError, match=says) as refused:
        await run(config(tmp_path, entry("tiny-base", **fields)))
    assert "models.tiny: local/tiny-base" in str(refused.value)
    assert "\n" not in str(refused.value)
    with pytest.raises(ProviderConfigError, match=says):  # named without a models file
        await run(config(tmp_path, ModelEntry.from_spec("local/tiny-base")))
    assert fake.pids() == []


async def test_a_base_model_asked_for_a_json_schema_is_refused_by_name(
    fake: FakeServers, tmp_path: Path
) -> None:
    """A schema goes with chat completions, which a base model has not: the refusal names the
    model, as the other refusals do (it is made while the provider is being built)."""
    asked = entry("tiny-base", answer="choice", json_schema=True)
    with pytest.raises(ModelsFileError, match="local/tiny-base: json_schema = true needs chat"):
        await run(config(tmp_path, asked))
    assert fake.pids() == []


def test_an_unknown_local_model_lists_the_four() -> None:
    with pytest.raises(ProviderConfigError, match=r"qwen2\.5-coder-1\.5b-instruct"):
        make_provider("local/qwen-9000")


async def test_bound_it_is_keyed_by_its_weights_and_sent_one_call_at_a_time(
    fake: FakeServers,
) -> None:
    bound = await bind_models([entry()], concurrency=16, overrides={}, check=False)
    try:
        model = bound["tiny"]
        assert model.identity["identity"] == fake.model.identity
        assert fake.model.sha256 in model.identity["identity"]
        # its choice questions put "Answer: (" in the model's turn, and are keyed so
        assert model.identity["choice"] == "prefilled" and model.provider.choice_prefill
        assert model.endpoint.concurrency == 1
        assert fake.pids() == []  # nothing called yet: no server
    finally:
        await close_models(bound)


async def test_started_on_first_call_when_no_check_ran(fake: FakeServers, tmp_path: Path) -> None:
    result = await run(dataclasses.replace(config(tmp_path), check_servers=False))
    assert result.complete
    [pid] = fake.pids()
    assert not alive(pid)


def test_its_options_are_those_of_the_models_file(fake: FakeServers, tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(
        '[models.tiny]\nspec = "local/tiny-test"\nanswer = "generate"\njson_schema = true\n'
        "options = { chat = true, threads = 2, ctx_size = 1024, timeout_s = 60 }\n"
    )
    tiny = load_models_file(models)["tiny"]
    provider = make_provider(tiny.spec, **tiny.provider_options())
    assert isinstance(provider, LocalProvider)
    assert provider.json_schema and provider.chat and provider.spec == "local/tiny-test"
    assert provider.server.threads == 2 and provider.server.n_ctx == 1024
    # threads and the context size change how fast it answers, not what: not in the key
    assert tiny.cache_identity()["options"] == {"chat": True}


def test_the_shipped_models_file_names_the_four_as_the_typed_entry_does() -> None:
    """examples/models.toml's local models are `local_entry`'s, setting for setting: greedy,
    seeded, in choice mode, each under its own name."""
    shipped = load_models_file(ROOT / "examples" / "models.toml")
    local = {name: e for name, e in shipped.items() if e.spec.startswith("local/")}
    assert local == {name: local_entry(model) for name, model in LOCAL_MODELS.items()}
    assert all(e.answer == "choice" and e.params.temperature == 0 for e in local.values())


def test_a_typed_entry_is_written_and_read_back_unchanged(tmp_path: Path) -> None:
    """The same entry as `local/` and at a server started by hand, through the models file
    the demo writes; the served one keyed by the weights and asked one call at a time."""
    mine = local_entry(QWEN, name="qwen", answer="generate", json_schema=True, threads=2)
    served = local_entry(QWEN, name="served", max_tokens=8, base_url="http://127.0.0.1:9/v1")
    models = tmp_path / "models.toml"
    models.write_text(models_file_text([mine, served]), encoding="utf-8")
    assert list(load_models_file(models).values()) == [mine, served]
    assert (mine.spec, served.spec) == (f"local/{QWEN.name}", f"openai/{QWEN.name}")
    assert (served.identity, served.concurrency, mine.identity) == (QWEN.identity, 1, None)
    assert served.options == {"chat": True, "json_mode": False, "timeout_s": 300.0}
    assert mine.options == {"threads": 2} and mine.cache_identity()["options"] == {}


def test_the_busy_and_prefix_cache_shares_of_a_servers_usage() -> None:
    """Planted: 3 s reading prompts and 1 s generating in 10 s up is busy 0.4; 75 of 100
    prompt tokens from the cache is 0.75. No time up or no prompt: no share, not 0."""
    usage = ServerUsage(up_s=10.0, prompt_ms=3000.0, predicted_ms=1000.0, prompt_n=25, cache_n=75)
    assert usage.busy_share() == pytest.approx(0.4)
    assert usage.cached_share() == pytest.approx(0.75)
    assert ServerUsage().busy_share() is None and ServerUsage().cached_share() is None
    twice = usage.plus(usage)
    assert twice.sessions == 2 and twice.busy_share() == pytest.approx(0.4)
