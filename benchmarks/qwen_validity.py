"""How often does Qwen2.5-Coder 0.5B write an invalid answer, free and schema-constrained?

The generate-mode half of `make demo-llm`, for Qwen alone: the same per-task slices of the
suite (`engine.suite_run.suite_slices`), each asked twice through one llama.cpp server:

- `free`: as the demo asks it, the JSON form stated in the prompt only;
- `constrained`: `json_schema = true`, so each call carries its task's answer schema
  (`AnswerForm.schema`) and llama.cpp can write only answers of that form.

With `--judge`, also the demo's judged run on the first 2 sample conversations with Qwen as
the judge, both ways, for its position bias: the share of its decisive pairwise picks (in
both orders) that name the reply shown first, as the report computes it.

The last line is JSON: per variant, per task, `invalid` of `answers`, and the judge's
`first_shown` rate. Answers are cached under OUT, so a second run only reads them.

    .venv/bin/python benchmarks/qwen_validity.py [--out DIR] [--variants free,constrained]
        [--tasks emotion,rating] [--judge] [--threads N] [--quick]

`--quick`: the constrained variant on one outcome item (the sample's first conversation, its
first two turns, not the suite), in a fresh folder.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.locations import data_dir
from attunebench.data.sample import sample_path
from attunebench.engine import read_records
from attunebench.engine.runner import RunConfig, run
from attunebench.engine.suite_run import suite_slices
from attunebench.models.llamacpp_server import LlamaServer
from attunebench.models.local_models import QWEN
from attunebench.models.modelsfile import ModelEntry
from testkit import prerequisites
from testkit.demo_llm import (
    MAX_TOKENS,
    OPTIONS,
    PER_TASK,
    SAMPLE_CONVERSATIONS,
    judged_tasks,
)
from testkit.local_entry import local_entry

VARIANTS = {"free": False, "constrained": True}
QUICK_TASK = "outcome"  # one item a conversation


def qwen_entry(server: LlamaServer, variant: str) -> ModelEntry:
    return local_entry(
        QWEN,
        name=f"qwen-{variant}",
        answer="generate",
        max_tokens=MAX_TOKENS["qwen"],
        json_schema=VARIANTS[variant],
        base_url=server.base_url,
    )


def invalid_by_task(rundir: Path) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for record in read_records(rundir / "records.jsonl"):
        counts.setdefault(record.task, Counter())[record.status] += 1
    return {t: {"invalid": c["invalid"], "answers": sum(c.values())} for t, c in counts.items()}


def first_shown(rundir: Path) -> dict[str, Any]:
    """The judge's share of decisive pairwise picks naming the reply shown first, as the
    report computes it (with its interval)."""
    from attunebench.analysis import Options, build_summary, load_runs

    summary = build_summary(load_runs([rundir]), Options())
    return {
        name: bias.first_shown_share.model_dump(mode="json")
        for name, bias in summary.judge_bias.items()
    }


def judged_config(out: Path) -> RunConfig:
    sample = out / "data" / "sample.jsonl"
    write_conversations(sample, read_conversations(sample_path())[:SAMPLE_CONVERSATIONS])
    return RunConfig(
        data=sample, out=out, models=(), tasks=tuple(judged_tasks()), task_options=OPTIONS
    )


def quick_config(out: Path) -> RunConfig:
    """One outcome item: the sample's first conversation cut to its first two turns (a short
    prompt), in place of the suite's slices."""
    sample = out / "data" / "quick.jsonl"
    sample.parent.mkdir(parents=True, exist_ok=True)
    first = read_conversations(sample_path())[0]
    write_conversations(sample, [first.model_copy(update={"turns": first.turns[:2]})])
    return RunConfig(
        data=sample,
        out=out,
        models=(),
        tasks=(QUICK_TASK,),
        task_options={QUICK_TASK: OPTIONS.get(QUICK_TASK, {})},
        progress=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("demo-out") / "qwen-validity")
    parser.add_argument("--suite", default="open-v1-mini")
    parser.add_argument("--variants", default="constrained,free")
    parser.add_argument("--tasks", default="", help="comma-separated; default: every task")
    parser.add_argument("--judge", action="store_true", help="also the judged run")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="one sample outcome item")
    args = parser.parse_args()
    if args.quick:
        args.variants, args.judge = "constrained", False
        args.out = Path(tempfile.mkdtemp(prefix="attunebench-qwen-validity-"))
    prerequisites.llama_server()
    model = prerequisites.local_model(QWEN)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    cache = out / "cache.sqlite"
    tasks = set(args.tasks.split(",")) if args.tasks else None
    if args.quick:
        configs = [quick_config(out)]
    else:
        prerequisites.shared_data(data_dir())
        slices, _ = suite_slices(args.suite, out, PER_TASK, tasks)
        configs = [dataclasses.replace(config, progress=False) for config in slices]
    figures: dict[str, Any] = {}
    log = out / "llama-server-qwen.log"
    with LlamaServer(model, log=log, alias=QWEN.name, threads=args.threads) as server:
        for variant in args.variants.split(","):
            entry = qwen_entry(server, variant)
            shown: dict[str, Any] = {}
            for config in configs:
                rundir = out / f"run-{variant}-{config.tasks[0]}"
                began = time.perf_counter()
                todo = dataclasses.replace(config, out=rundir, models=(entry,), cache_path=cache)
                asyncio.run(run(todo))
                shown.update(invalid_by_task(rundir))
                seconds = time.perf_counter() - began
                print(variant, config.tasks[0], shown.get(config.tasks[0]), f"{seconds:.0f} s")
            if args.judge:
                rundir = out / f"run-{variant}-judge"
                judged = dataclasses.replace(
                    judged_config(out), out=rundir, cache_path=cache, progress=False
                )
                judged = dataclasses.replace(judged, models=(entry,), judges=(entry,))
                asyncio.run(run(judged))
                shown["judge"] = first_shown(rundir)
                print(variant, "judge", shown["judge"])
            invalid = sum(v["invalid"] for k, v in shown.items() if k != "judge")
            answers = sum(v["answers"] for k, v in shown.items() if k != "judge")
            shown["all"] = {"invalid": invalid, "answers": answers}
            figures[variant] = shown
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
