"""`make demo-llm`: a slice of the open suite through two real LLMs on this machine, beside the
baselines and the trivial references (docs/running-models.md says what each model does).

Gemma 3 270M, a base model, answers in `choice` mode (the probability of each option key);
Qwen2.5-Coder 0.5B Instruct writes each task's JSON in `generate` mode, its decoding held to the
task's answer schema unless `--free`, and judges. Both are `local/` models: each run starts
their llama.cpp servers on 127.0.0.1 and stops them at its end. Each task runs on its own
slice (`suite_slices`: the 10 conversations with its items and the shortest transcripts), then
the judged tasks on 2 sample conversations; one report over all of it, whose numbers are not
the suite's.

    PYTHONPATH=benchmarks python -m testkit.demo_llm [--out DIR] [--suite NAME] [--threads N]
        [--free]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from attunebench.analysis import Options, build_summary, load_runs
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.engine import read_records
from attunebench.engine.runner import RunConfig, run
from attunebench.engine.stopping import main_stoppable
from attunebench.engine.suite_run import suite_slices
from attunebench.models.local_models import GEMMA, QWEN, LocalModel
from attunebench.models.modelsfile import ModelEntry, models_file_text
from attunebench.report import write_report
from attunebench.tasks import load_tasks
from testkit.local_entry import local_entry

console = Console()
SAMPLE_CONVERSATIONS = 2
PER_TASK = 10  # conversations per task: the minimum for an interval
# Options of the judged tasks (a file beside this one): a choice-mode judge has no rubric form.
OPTIONS = tomllib.loads(Path(__file__).with_suffix(".toml").read_text(encoding="utf-8"))
# Generous for a JSON answer; a reply or a verdict with its reason fits too.
MAX_TOKENS = {"gemma": 48, "qwen": 128}  # by alias


def say(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def judged_tasks() -> list[str]:
    """The registered tasks that need a judge, run on the sample (they need its recorded picks
    and what its participants wanted)."""
    tasks = load_tasks()
    return [name for name in tasks.names() if tasks.get(name)().needs_judge]


def baselines(train: Path) -> tuple[ModelEntry, ...]:
    fitted = {"train": str(train)}
    return (
        ModelEntry.from_spec("baseline/random"),
        ModelEntry(name="baseline/majority", spec="baseline/majority", options=fitted),
    )


def timed_run(config: RunConfig) -> None:
    """Run `config`, then say what it recorded, in how long and at what cost."""
    begun = time.perf_counter()
    result = asyncio.run(run(config))
    t, seconds = result.totals, time.perf_counter() - begun
    say(
        f"{config.out.name}: {result.recorded}/{result.planned} items ({result.failed} failed) "
        f"in {seconds:.0f} s; {t.calls} calls, {t.input_tokens}+{t.output_tokens} tokens"
    )


def invalid_share(rundirs: Sequence[Path], model: ModelEntry) -> str:
    records = [
        r for d in rundirs for r in read_records(d / "records.jsonl") if r.model == model.name
    ]
    invalid = sum(r.status == "invalid" for r in records)
    share = invalid / len(records) if records else 0.0
    how = "schema-constrained" if model.json_schema else "free"
    return (
        f"{model.name}: {invalid} of {len(records)} generated answers invalid ({share:.1%}; {how})"
    )


def model_entry(model: LocalModel, *, threads: int, free: bool) -> ModelEntry:
    """`model` as `local/` (Gemma in choice mode; Qwen in generate mode, schema-constrained
    unless `free`), named by its short alias."""
    generate = model.chat
    return local_entry(
        model,
        name=model.alias,
        answer="generate" if generate else "choice",
        max_tokens=MAX_TOKENS[model.alias],
        json_schema=generate and not free,
        threads=threads,
    )


def served_models(out: Path, *, threads: int, free: bool = False) -> dict[str, ModelEntry]:
    """The two models as `local/` entries (each run starts and stops their servers), by alias,
    also written to OUT/models.toml; each file verified first."""
    entries = [model_entry(model, threads=threads, free=free) for model in (GEMMA, QWEN)]
    (out / "models.toml").write_text(models_file_text(entries), encoding="utf-8")
    for model in (GEMMA, QWEN):
        path = model.path()
        say(f"{model.alias}: local/{model.name}, {path.name} verified ({threads} threads)")
    return {entry.name: entry for entry in entries}


def main() -> None:
    parser = argparse.ArgumentParser(description="AttuneBench against local Gemma and Qwen.")
    parser.add_argument("--out", type=Path, default=Path("demo-out") / "llm")
    parser.add_argument("--suite", default="open-v1-mini", help="the suite to take a slice of")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per server")
    parser.add_argument("--free", action="store_true", help="ask Qwen without the answer schemas")
    args = parser.parse_args()
    out: Path = args.out
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    cache = out / "cache.sqlite"

    per_task, train = suite_slices(args.suite, out, PER_TASK)
    slices = [
        dataclasses.replace(config, out=out / f"run-{config.tasks[0]}", cache_path=cache)
        for config in per_task
    ]
    sample = data / "sample.jsonl"
    write_conversations(sample, read_conversations(sample_path())[:SAMPLE_CONVERSATIONS])
    judged = RunConfig(
        data=sample,
        out=out / "run-judge",
        models=(),
        tasks=tuple(judged_tasks()),
        task_options=OPTIONS,
        cache_path=cache,
    )
    started = time.perf_counter()
    served = served_models(out, threads=args.threads, free=args.free)
    for config in slices:
        timed_run(dataclasses.replace(config, models=(*served.values(), *baselines(train))))
    timed_run(
        dataclasses.replace(judged, models=tuple(served.values()), judges=(served[QWEN.alias],))
    )
    say(f"both models, every run: {time.perf_counter() - started:.0f} s")
    say(invalid_share([c.out for c in slices], served[QWEN.alias]))
    runs = load_runs([*(c.out for c in slices), judged.out], allow_mixed_datasets=True)
    written = write_report(build_summary(runs, Options()), out / "report")
    say(f"report: {written[-1]}")
    say(f"summary: {written[0]}")


if __name__ == "__main__":
    main_stoppable(main)  # SIGTERM stops the runs' servers as Ctrl-C does
