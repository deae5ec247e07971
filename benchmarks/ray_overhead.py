"""What `run --ray` costs over one process, on the bundled sample and on open-v1-mini.

Each plan (every task that needs no judge, `mock/default` and `baseline/random`, no cache:
the calls cost nothing and take no time, so what is measured is the machinery) is run through
the CLI three ways, timed from the command's start to its end: in one process; with `--ray
--ray-address local` (a local Ray started for the run and stopped after it: what a first
`--ray` on a laptop pays); and against a Ray cluster already running on this machine (one
node of SHARDS CPUs, started once and stopped by PID: what a run on a cluster pays). The
difference between the last and the first is Ray's cost on a warm cluster: the driver's
connection, the workers' start, and two round trips to the driver per call (each call is
kept before it goes out, each answer before the next call). open-v1-mini needs its corpora
(ATTUNEBENCH_DATA_DIR).

    .venv/bin/python benchmarks/ray_overhead.py [--shards N]
        [--quick]   (10 conversations of the sample: the same path, no figure to quote)

The last line printed is JSON.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from attunebench.data.sample import sample_path
from attunebench.rundir import read_ledger, read_run_info
from testkit.prerequisites import MISSING_DATA, missing
from testkit.ray_cluster import RayCluster, ray_env
from testkit.ray_drills import cli_command

MODELS = ["--model", "mock/default", "--model", "baseline/random"]


def timed(command: list[str], out: Path, env: dict[str, str]) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run([*command, "--out", str(out)], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if "needs corpora that are missing" in done.stderr:
        missing(done.stderr.strip().splitlines()[-1], MISSING_DATA)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    info, ledger = read_run_info(out), read_ledger(out)
    calls = sum(e.calls for e in ledger.entries) if ledger is not None else 0
    return {"s": round(seconds, 1), "items": info.planned_items if info else 0, "calls": calls}


def measure(plan: list[str], work: Path, cluster: RayCluster, shards: int) -> dict[str, Any]:
    base = [*cli_command(), "run", *plan, *MODELS, "--no-cache", "--no-progress"]
    ray = ["--ray", "--ray-shards", str(shards)]
    one = timed(base, work / "one", ray_env(None))
    local = timed([*base, *ray, "--ray-address", "local"], work / "local", ray_env(None))
    warm = timed([*base, *ray, "--ray-address", cluster.address], work / "warm", cluster.env())
    return {
        "items": one["items"],
        "calls": one["calls"],
        "one_process_s": one["s"],
        "ray_local_s": local["s"],
        "ray_cluster_s": warm["s"],
        "ray_cluster_overhead_s": round(warm["s"] - one["s"], 1),
        "ray_local_overhead_s": round(local["s"] - one["s"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="10 conversations of the sample")
    args = parser.parse_args()
    plans = {"sample": ["--data", str(sample_path())]}
    if args.quick:
        plans["sample"] += ["--limit", "10"]
    else:
        plans["open-v1-mini"] = ["--suite", "open-v1-mini"]
    results: dict[str, Any] = {"shards": args.shards}
    with tempfile.TemporaryDirectory() as scratch, RayCluster(nodes=1, cpus=args.shards) as cluster:
        for name, plan in plans.items():
            work = Path(scratch) / name
            work.mkdir()
            results[name] = measure(plan, work, cluster, args.shards)
            print(name, results[name], file=sys.stderr, flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
