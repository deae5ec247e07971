"""Reliability figures: a run against a server failing a share of calls, and a run killed with
SIGKILL and resumed, each compared with an undisturbed run of the same plan.

Usage: python benchmarks/reliability.py [--fail-rate 0.3] [--seed 1] [--kills 5] [--data FILE]
       [--quick]   (the sample's first 2 conversations, one kill)
Both drills run every task on the data (default: the sample) with an openai/ subject and judge
pointed at `testkit.servers.FaultServer` on 127.0.0.1. The last line printed is JSON:
faults_injected, calls_retried, records_identical, repeated_successful_calls, items_lost (both
drills together), then each drill's own figures. Retries are counted by the server (attempts of
a call after its first), since a killed session's ledger dies with it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from testkit.drills import crash_drill, fault_drill
from testkit.servers.fault_server import FaultPlan

QUICK_CONVERSATIONS = 2


def run_fault_drill(data: Path, work: Path, plan: FaultPlan) -> dict[str, Any]:
    started = time.perf_counter()
    drill = asyncio.run(fault_drill(data, work, plan, timeout_s=2.0))
    stats = drill.faulty.stats
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "items": len(drill.clean.records),
        "requests": stats["requests"],
        "faults_injected": stats["faults_injected"],
        "faults": stats["faults"],
        "fault_share": round(stats["faults_injected"] / max(1, stats["requests"]), 3),
        "calls_retried": stats["retried_requests"],
        "failed_records": drill.faulty.failed,
        "records_identical": drill.records_identical,
        "repeated_successful_calls": stats["repeated_successful_calls"],
        "items_lost": len(drill.clean.records.keys() - drill.faulty.records.keys()),
    }


def run_crash_drill(
    data: Path, work: Path, plan: FaultPlan, kills: int, seed: int
) -> dict[str, Any]:
    started = time.perf_counter()
    # A client timeout well above the slowest real answer (tests/reliability/test_crash_resume.py)
    drill = crash_drill(data, work, plan, kills=kills, seed=seed, timeout_s=2.0)
    return {
        "seconds": round(time.perf_counter() - started, 2),
        "items": drill.planned,
        "kills": drill.kills,
        "sessions": drill.sessions,
        "unsettled_kills": drill.unsettled_kills,
        "faults_injected": drill.faults_injected,
        "calls_retried": drill.retries,
        "records_identical": drill.records_identical,
        "repeated_successful_calls": drill.repeated_successful_calls,
        "items_lost": drill.items_lost,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fail-rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--data", type=Path, default=sample_path())
    parser.add_argument("--quick", action="store_true", help="2 conversations, one kill")
    args = parser.parse_args()
    plan = FaultPlan(fail_rate=args.fail_rate, seed=args.seed, retry_after_s=0.01, timeout_s=0.6)
    with tempfile.TemporaryDirectory(prefix="attunebench-reliability-") as scratch:
        if args.quick:
            args.kills, args.data = 1, Path(scratch) / "quick.jsonl"
            write_conversations(args.data, read_conversations(sample_path())[:QUICK_CONVERSATIONS])
        faults = run_fault_drill(args.data, Path(scratch) / "faults", plan)
        print(
            f"fault drill: {faults['items']} items, {faults['requests']} requests, "
            f"{faults['faults_injected']} faults injected ({faults['fault_share']:.0%}: "
            f"{', '.join(f'{k} {n}' for k, n in sorted(faults['faults'].items()))}), "
            f"{faults['calls_retried']} retries, {faults['failed_records']} failed records, "
            f"records identical to a fault-free run: {faults['records_identical']} "
            f"({faults['seconds']} s)"
        )
        crash = run_crash_drill(args.data, Path(scratch) / "crash", plan, args.kills, args.seed)
        print(
            f"crash drill: {crash['kills']} kill -9s over {crash['sessions']} sessions, "
            f"{crash['faults_injected']} faults injected, records identical to an "
            f"uninterrupted run: {crash['records_identical']}, successful calls repeated: "
            f"{crash['repeated_successful_calls']}, items lost: {crash['items_lost']} "
            f"({crash['seconds']} s)"
        )
    drills = (faults, crash)
    summary = {
        "faults_injected": sum(d["faults_injected"] for d in drills),
        "calls_retried": sum(d["calls_retried"] for d in drills),
        "records_identical": all(d["records_identical"] for d in drills),
        "repeated_successful_calls": sum(d["repeated_successful_calls"] for d in drills),
        "items_lost": sum(d["items_lost"] for d in drills),
        "fault_drill": faults,
        "crash_drill": crash,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
