"""`run --max-cost USD` against the Anthropic stand-in: an estimate over the cap stops the run
before any call (the pre-flight's too); a cap reached mid-run stops it cleanly, and the same
command with a larger cap resumes it without repeating a call; a paid model with no price
cannot be held to a cap."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data.sample import sample_path
from attunebench.rundir import read_ledger, read_records
from testkit.servers.anthropic_stub import AnthropicStub

TIMEOUT = pytest.mark.timeout(180)
ESTIMATE = re.compile(r"estimated cost \$([\d,.]+)")


@pytest.fixture
def stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as served:
        yield served


def models_file(tmp_path: Path, url: str, price: str | None) -> Path:
    path = tmp_path / "models.toml"
    entry = f'[models.claude]\nspec = "anthropic/claude-sonnet-4-6"\nbase_url = "{url}"\n'
    entry += "params = { max_tokens = 300 }\n"
    path.write_text(entry + (f"price = {price}\n" if price else ""), "utf-8")
    return path


def cli_run(tmp_path: Path, models: Path, cap: float) -> tuple[int, str]:
    args = ["run", "--data", str(sample_path()), "--task", "emotion", "--limit", "3"]
    args += ["--models-file", str(models), "--model", "claude", "--no-progress"]
    args += ["--concurrency", "1", "--cache", str(tmp_path / "cache.sqlite")]
    args += ["--out", str(tmp_path / "run"), "--max-cost", str(cap)]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


@TIMEOUT
def test_max_cost_under_the_estimate_stops_before_the_first_call(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    models = models_file(tmp_path, stub.base_url, "{ input = 3.0, output = 15.0 }")
    code, output = cli_run(tmp_path, models, 0.01)
    assert code == 2, output
    [line] = [line for line in output.splitlines() if "estimated cost" in line]
    assert "over --max-cost $0.0100" in line and "the largest share: claude $" in line
    assert "(100%)" in line and "nothing was called" in line
    stats = stub.stats()
    assert stats["preflight"] == 0 and stats["live_calls"] == 0  # not even the pre-flight
    assert not (tmp_path / "run" / "records.jsonl").exists()
    # The estimate is an upper bound: the same run, uncapped, costs less.
    match = ESTIMATE.search(line)
    assert match is not None
    code, output = cli_run(tmp_path, models, 1000.0)
    ledger = read_ledger(tmp_path / "run")
    assert code == 0 and ledger is not None, output
    assert 0 < sum(e.cost_usd for e in ledger.entries) <= float(match.group(1).replace(",", ""))


@TIMEOUT
def test_max_cost_reached_mid_run_stops_cleanly_and_a_larger_cap_resumes_without_repeating(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    # Priced by its input alone: the stand-in counts a few more prompt tokens than four
    # characters a token, so the run spends a little more than its estimate, and a cap set
    # at the estimate is reached before the last call.
    models = models_file(tmp_path, stub.base_url, "{ input = 1000.0, output = 0.0 }")
    _, output = cli_run(tmp_path, models, 0.000001)
    match = ESTIMATE.search(output)
    assert match is not None, output
    cap = float(match.group(1).replace(",", "")) + 0.0001
    code, output = cli_run(tmp_path, models, cap)
    assert code == 1, output  # stopped: items left, resumable
    assert "max cost: stopped before a call that could pass --max-cost" in output
    records = read_records(tmp_path / "run" / "records.jsonl")
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None and 0 < len(records) < 20
    spent = sum(e.cost_usd for e in ledger.entries)
    assert spent <= cap * 1.1  # at most one call's estimate error past the cap
    code, output = cli_run(tmp_path, models, cap * 10)
    assert code == 0, output
    assert "items recorded, 0 failed" in output
    assert stub.on_loop(lambda: max(stub.counts.live.values())) == 1  # no call made twice
    ledger = read_ledger(tmp_path / "run")
    assert ledger is not None
    assert sum(e.calls for e in ledger.entries) == sum(
        stub.on_loop(lambda: stub.counts.live.values())
    )


@TIMEOUT
def test_max_cost_refuses_a_paid_model_without_a_price_and_lets_a_free_one_run(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    code, output = cli_run(tmp_path, models_file(tmp_path, stub.base_url, None), 5.0)
    assert code == 2 and "--max-cost needs a price for every paid model: claude" in output
    assert stub.stats()["live_calls"] == 0
    args = ["run", "--data", str(sample_path()), "--task", "emotion", "--limit", "2"]
    args += ["--model", "mock/constant", "--no-cache", "--no-progress", "--max-cost", "0"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "free")])
    assert result.exit_code == 0, result.output


@TIMEOUT
def test_max_cost_leaves_a_parameter_the_model_refuses_to_the_preflight_line(
    stub: AnthropicStub, tmp_path: Path
) -> None:
    path = tmp_path / "models.toml"
    path.write_text(
        f'[models.claude]\nspec = "anthropic/claude-opus-4-7"\nbase_url = "{stub.base_url}"\n'
        "params = { thinking_budget = 2048 }\nprice = { input = 5.0, output = 25.0 }\n",
        "utf-8",
    )
    code, output = cli_run(tmp_path, path, 100.0)
    assert code == 2 and "does not take params.thinking_budget" in output, output


def test_max_cost_with_ray_is_refused_before_anything_runs(tmp_path: Path) -> None:
    # Each shard would count only its own spend, so the run as a whole could pass the cap.
    args = ["run", "--data", str(sample_path()), "--task", "emotion", "--limit", "2"]
    args += ["--model", "mock/constant", "--no-cache", "--no-progress", "--max-cost", "1"]
    result = CliRunner().invoke(app, [*args, "--ray", "--out", str(tmp_path / "ray")])
    assert result.exit_code == 2, result.output
    assert "--max-cost is not kept across --ray shards" in result.output
    assert not (tmp_path / "ray").exists()
