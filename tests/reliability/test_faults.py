"""Faults: a run against a server failing 30% of calls scores exactly as a fault-free run, and
calls that fail for good end as `failed` records, never as answers."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from attunebench.data.sample import sample_path
from attunebench.engine import RetryPolicy, read_run_info
from attunebench.models.base import GenerateParams, Message, ProviderError
from attunebench.models.openai_compat import OpenAICompatProvider
from testkit.drills import FAST_RETRIES, RunOutcome, engine_run
from testkit.records import diff_records
from testkit.servers import FAULT_KINDS, FaultPlan, FaultServer
from testkit.servers.answers import answer_from_prompt

FAULTY = FaultPlan(fail_rate=0.3, seed=11, retry_after_s=0.01, timeout_s=0.6)
# The client's patience: far above a loaded machine's slowest answer, so a call is repeated only
# after an injected fault (a held request is dropped at 0.6 s), never because an answer was
# slow, which the server would count as a second successful call.
PATIENCE_S = 2.0


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> RunOutcome:
    out = tmp_path_factory.mktemp("clean") / "run"
    return asyncio.run(
        engine_run(sample_path(), out, FaultPlan(fail_rate=0.0), timeout_s=PATIENCE_S)
    )


def test_fault_plans_are_seeded_order_free_and_transient() -> None:
    keys = [f"request-{n}" for n in range(3000)]
    plan = FaultPlan(fail_rate=0.3, seed=5)
    first = [plan.fault(key, 0) for key in keys]
    assert first == [FaultPlan(fail_rate=0.3, seed=5).fault(key, 0) for key in reversed(keys)][::-1]
    assert first != [FaultPlan(fail_rate=0.3, seed=6).fault(key, 0) for key in keys]
    share = sum(f is not None for f in first) / len(keys)
    assert 0.27 < share < 0.33
    assert set(first) - {None} == set(FAULT_KINDS)
    assert all(plan.fault(key, plan.max_faults_per_request) is None for key in keys)


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ({"fail_rate": 1.5}, "fail_rate and permanent_rate are shares between 0 and 1"),
        ({"permanent_rate": -0.1}, "fail_rate and permanent_rate are shares between 0 and 1"),
        ({"fail_rate": float("nan")}, "fail_rate and permanent_rate are shares between 0 and 1"),
        ({"kinds": ("bogus",)}, "fault kinds must be some of " + ", ".join(FAULT_KINDS)),
        ({"kinds": ()}, "fault kinds must be some of " + ", ".join(FAULT_KINDS)),
    ],
)
def test_a_bad_fault_plan_is_refused_in_one_line(asked: dict[str, object], said: str) -> None:
    # The module's command line shows this message as its last line: one line, what to fix.
    with pytest.raises(ValueError) as refused:
        FaultPlan(**asked)  # type: ignore[arg-type]
    assert str(refused.value) == said


async def test_every_fault_kind_reaches_the_client_as_a_retryable_error() -> None:
    plan = FaultPlan(fail_rate=1.0, max_faults_per_request=10**6, retry_after_s=2.5, timeout_s=0.4)
    seen: dict[str, ProviderError] = {}
    with FaultServer(plan) as server:
        provider = OpenAICompatProvider("m", base_url=server.base_url, timeout_s=0.2)
        try:
            for n in range(80):
                before = Counter(server.stats()["faults"])
                with pytest.raises(ProviderError) as caught:
                    await provider.generate([Message("user", f"hello {n}")], GenerateParams())
                [kind] = Counter(server.stats()["faults"]) - before  # the fault just injected
                seen.setdefault(kind, caught.value)
        finally:
            await provider.aclose()
        faults = server.stats()["faults"]
    assert set(seen) == set(FAULT_KINDS) == set(faults)
    assert all(error.retryable for error in seen.values())
    assert seen["rate_limit"].status == 429 and seen["rate_limit"].retry_after_s == 2.5
    assert seen["server_error"].status == 500 and seen["unavailable"].status == 503
    assert "timed out" in str(seen["timeout"]) and "malformed" in str(seen["malformed"])


def test_a_choice_or_short_budget_request_still_gets_the_answer_read_off_the_prompt() -> None:
    # The fault server injects faults and nothing else: a request with logprobs (choice mode)
    # or a budget shorter than the answer gets the same answer off the prompt as a plain one,
    # whole, as does a body with no model named.
    messages = [{"role": "user", "content": "How does the person feel? Answer A or B."}]
    bodies = [
        {"model": "m", "messages": messages},
        {"model": "m", "messages": messages, "logprobs": True, "top_logprobs": 5},
        {"model": "m", "messages": messages, "max_tokens": 1},
        {"messages": messages},
    ]
    with FaultServer(FaultPlan(fail_rate=0.0)) as server:
        answers = []
        for body in bodies:
            request = urllib.request.Request(
                f"{server.base_url}/chat/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                [choice] = json.load(response)["choices"]
            answers.append((choice["finish_reason"], choice["message"]["content"]))
    assert answers == [("stop", answer_from_prompt(messages))] * len(bodies)


def test_a_run_with_30_percent_faults_scores_exactly_as_a_fault_free_run(
    clean: RunOutcome, tmp_path: Path
) -> None:
    faulty = asyncio.run(engine_run(sample_path(), tmp_path / "run", FAULTY, timeout_s=PATIENCE_S))
    assert not diff_records(clean.records, faulty.records)
    stats = faulty.stats
    assert set(stats["faults"]) == set(FAULT_KINDS)
    assert stats["faults_injected"] >= 0.25 * stats["requests"]
    assert faulty.retries == stats["faults_injected"]  # each fault retried, none exhausted
    assert faulty.failed == 0 and stats["repeated_successful_calls"] == 0
    assert Counter(stats["successes"]) == Counter(clean.stats["successes"])
    assert len({r["score"] for r in clean.records.values()}) > 3  # answers are a spread


def _failures(clean: RunOutcome, outcome: RunOutcome) -> list[dict[str, object]]:
    differing = [line.split(":")[0] for line in diff_records(clean.records, outcome.records)]
    failed = [r for r in outcome.records.values() if r["status"] == "failed"]
    assert len(differing) == len(failed) > 0  # what differs is what failed, nothing else
    for record in failed:
        assert record["score"] is None and record["scores"] == {}
        assert record["error"]
    return failed


def test_refused_calls_end_as_failed_records_and_the_run_is_incomplete(
    clean: RunOutcome, tmp_path: Path
) -> None:
    plan = FaultPlan(
        fail_rate=0.3,
        seed=11,
        permanent_rate=0.05,
        permanent_models=("subject",),
        retry_after_s=0.01,
    )
    out = tmp_path / "run"
    outcome = asyncio.run(engine_run(sample_path(), out, plan, timeout_s=PATIENCE_S))
    failed = _failures(clean, outcome)
    assert all("HTTP 400" in str(r["error"]) for r in failed)
    assert all(r["prediction"] is None for r in failed if r["task"] != "response")
    refused = outcome.stats["refused"]
    assert refused > 0 and outcome.stats["requests"] == (
        refused + outcome.stats["faults_injected"] + outcome.stats["successful_calls"]
    )  # a 400 is never retried
    info = read_run_info(out)
    assert info is not None and not info.complete


def test_retries_stop_at_the_policy_limit_when_a_server_keeps_failing(
    clean: RunOutcome, tmp_path: Path
) -> None:
    plan = FaultPlan(
        fail_rate=0.0,
        seed=3,
        permanent_rate=0.05,
        permanent_status=503,
        permanent_models=("subject",),
    )
    policy = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.005)
    outcome = asyncio.run(
        engine_run(sample_path(), tmp_path / "run", plan, timeout_s=PATIENCE_S, policy=policy)
    )
    failed = _failures(clean, outcome)
    assert all("after 3 attempts" in str(r["error"]) for r in failed)
    assert outcome.stats["refused"] % 3 == 0 and outcome.stats["refused"] > 0
    assert FAST_RETRIES.max_attempts > policy.max_attempts


def test_a_refused_judge_call_is_never_a_verdict(clean: RunOutcome, tmp_path: Path) -> None:
    plan = FaultPlan(fail_rate=0.0, seed=4, permanent_rate=0.1, permanent_models=("judge",))
    outcome = asyncio.run(engine_run(sample_path(), tmp_path / "run", plan, timeout_s=PATIENCE_S))
    judged = [r for r in outcome.records.values() if r["verdicts"]]
    lost = [v for r in judged for v in r["verdicts"] if v["status"] == "failed"]
    assert lost and all(v["parsed"] is None for v in lost)
    for record in judged:
        failed = sum(v["status"] == "failed" for v in record["verdicts"])
        if failed:  # a lost verdict is a loss: the item is scored, flagged and kept
            assert record["status"] in ("ok", "invalid") and record["score"] is not None
            assert "judge-failed" in record["flags"]
            assert record["permanent"] and record["error"].startswith("judge: ")
    audited = [r for r in outcome.records.values() if r["task"] == "judge_audit"]
    refused = [r for r in audited if r["status"] == "failed"]
    assert refused  # the judge audit's model is the judge: its refused answers fail too
    assert all(r["permanent"] and r["score"] is None and not r["verdicts"] for r in refused)
    for key, record in outcome.records.items():
        if record in refused or any(v["status"] == "failed" for v in record["verdicts"]):
            continue
        assert record == clean.records[key]  # nothing else changed


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_fault_server_runs_as_a_module(tmp_path: Path) -> None:
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "testkit.servers.fault_server",
        "--port",
        str(port),
        "--fail-rate",
        "0",
        "--seed",
        "1",
    ]
    # the test kit lives beside the tests, not in the package: the child finds it as pytest does
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen(command, stderr=subprocess.PIPE, env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"{base}/v1/models", timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "did not start"
                time.sleep(0.1)
        chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        request = urllib.request.Request(
            f"{base}/v1/chat/completions", method="POST", data=json.dumps(chat).encode()
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            answer = json.load(response)["choices"][0]["message"]["content"]
        with urllib.request.urlopen(f"{base}/fault/stats", timeout=5) as response:
            stats = json.load(response)
        assert answer and stats["successful_calls"] == 1 and stats["faults_injected"] == 0
    finally:
        server.terminate()
        server.wait(10)
