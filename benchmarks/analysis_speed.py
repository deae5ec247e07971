"""How long does the whole analysis take at the paper's scale?

11 models x 4 tasks x 3,000 items in 200 conversations (synthetic records with planted
effects), 2,000 bootstrap resamples: reading the run directory and computing the whole
`summary.json`. Target: under 5 seconds on 2 cores. The last line is JSON.

    .venv/bin/python benchmarks/analysis_speed.py [--resamples N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from attunebench.analysis import Options, build_summary, load_runs, summary_json
from attunebench.analysis.synthetic import TASKS, Plan, write_run

MODELS = 11
CONVERSATIONS = 200
ITEMS_PER_CONVERSATION = 15  # 3,000 items per task and model


def plan() -> Plan:
    accuracy = {
        f"bench/model-{m:02d}": {
            task: 0.35 + 0.04 * ((m * (t + 1)) % 11) for t, task in enumerate(TASKS)
        }
        for m in range(MODELS)
    }
    return Plan(
        accuracy,
        conversations=CONVERSATIONS,
        items_per_conversation=ITEMS_PER_CONVERSATION,
        conversation_spread=0.5,
        invalid_rate=0.03,
        failed_rate=0.01,
        judge_accuracy=0.7,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        run = write_run(Path(scratch) / "run", plan())
        start, cpu = time.perf_counter(), time.process_time()
        runs = load_runs([run])
        loaded = time.perf_counter()
        summary = build_summary(runs, Options(seed=0, resamples=args.resamples))
        text = summary_json(summary)
        done, cpu = time.perf_counter(), time.process_time() - cpu
    items = len(runs.records)
    print(f"read {items} records in {loaded - start:.2f} s; summary in {done - loaded:.2f} s")
    print(f"summary.json: {len(text) / 1e6:.1f} MB, {len(summary.scores)} score rows")
    print(json.dumps({
        "seconds": round(done - start, 3),
        "load_seconds": round(loaded - start, 3),
        "cpu_seconds": round(cpu, 3),
        "models": MODELS,
        "tasks": len(TASKS),
        "items": ITEMS_PER_CONVERSATION * CONVERSATIONS,
        "records": items,
        "resamples": args.resamples,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
