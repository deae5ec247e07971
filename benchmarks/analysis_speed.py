"""How long does the whole analysis take at the paper's scale?

11 models x 4 tasks x 3,000 items in 200 conversations (synthetic records, format v2, with
planted effects, failures and invalid answers, and a judge audit), 2,000 bootstrap resamples:
reading the run directory, then computing the whole `summary.json` (scores, rank agreement with
reliability and ceilings, discriminability with ratios, diagnostics, subgroups, judge audit).
Target: the summary in at most 1.4 s of compute on 2 cores (reading, which makes the records'
columns, is reported separately).
The last line is JSON.

    .venv/bin/python benchmarks/analysis_speed.py [--resamples N] [--repeats N] [--quick]

`--quick`: the same analysis of 3 models in 20 conversations, 200 resamples, timed once.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from attunebench.analysis import Options, build_summary, load_runs, summary_json
from planted.synthetic import Plan, write_run

MODELS = 11
CONVERSATIONS = 200
ITEMS_PER_CONVERSATION = 15  # 3,000 items per task and model
TASKS = ("emotion", "behavior", "preference", "response")
QUICK_MODELS, QUICK_CONVERSATIONS, QUICK_RESAMPLES = 3, 20, 200


def plan(models: int = MODELS, conversations: int = CONVERSATIONS) -> Plan:
    accuracy = {
        f"bench/model-{m:02d}": {
            task: 0.35 + 0.04 * ((m * (t + 1)) % 11) for t, task in enumerate(TASKS)
        }
        for m in range(models)
    }
    return Plan(
        accuracy,
        conversations=conversations,
        items_per_conversation=ITEMS_PER_CONVERSATION,
        conversation_spread=0.5,
        invalid_rate=0.03,
        failed_rate=0.01,
        judge_accuracy=0.7,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3, help="summaries timed; the best wins")
    parser.add_argument("--quick", action="store_true", help="a tiny run of the same analysis")
    args = parser.parse_args()
    models, conversations = (
        (QUICK_MODELS, QUICK_CONVERSATIONS) if args.quick else (MODELS, CONVERSATIONS)
    )
    if args.quick:
        args.resamples, args.repeats = QUICK_RESAMPLES, 1
    with tempfile.TemporaryDirectory() as scratch:
        run = write_run(Path(scratch) / "run", plan(models, conversations))
        start = time.perf_counter()
        runs = load_runs([run])
        load_seconds = time.perf_counter() - start
    timings = []
    for _ in range(args.repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        summary = build_summary(runs, Options(seed=0, resamples=args.resamples))
        text = summary_json(summary)
        timings.append((time.perf_counter() - wall, time.process_time() - cpu))
    seconds, cpu_seconds = min(timings)
    result = {
        "summary_seconds": round(seconds, 3),
        "summary_cpu_seconds": round(cpu_seconds, 3),
        "load_seconds": round(load_seconds, 3),
        "repeats": args.repeats,
        "models": models,
        "tasks": len(TASKS),
        "items": ITEMS_PER_CONVERSATION * conversations,
        "records": len(runs.records),
        "resamples": args.resamples,
        "summary_mb": round(len(text) / 1e6, 1),
        "score_rows": len(summary.scores),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
