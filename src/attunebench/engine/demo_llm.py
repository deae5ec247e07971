"""`make demo-llm`: AttuneBench end to end against a real LLM on this machine, with the truth
about what it does.

Gemma 3 270M (the base model: no chat template, no instruction tuning) is assembled and
verified, served by llama.cpp's OpenAI-compatible server on 127.0.0.1, and asked in `choice`
mode: the probability of each option key as its next token, read through the `openai/`
provider (the same path as any hosted or vLLM model). A base model this small cannot write the
JSON a generated answer needs, but it does assign probabilities.

Bounded so it finishes in about five minutes on two cores:

- the first `--conversations` (default 10) conversations of ESConv's test split with MultiESC's
  seeker feedback that yield a preference pair (two of the seeker's ratings that differ; most
  conversations rate every reply alike, and a task scored in fewer than five conversations
  gets no interval): emotion, behavior (the first 3 labelled replies of each conversation: in
  choice mode every label is its own question), preference, rating and outcome, with
  `baseline/random`, `baseline/majority` and `baseline/knn` (fitted on the first 60
  conversations of the MultiESC validation split) beside it;
- the first 2 sample conversations: response (Gemma writes replies, continuing a plain
  transcript) with Gemma as a choice-mode pairwise judge, and the judge audit of Gemma
  against the participants' own picks.

Then one report over both runs (`report.html`, `summary.json`, different data: noted).

    python -m attunebench.engine.demo_llm [--out DIR] [--conversations N] [--threads N]
"""

from __future__ import annotations

import argparse
import asyncio
import time
import tomllib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from attunebench.data.importers import ESConvImporter
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.locations import corpus_dir
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.engine.runner import RunConfig, RunResult, run
from attunebench.models.llamacpp_server import LlamaServer, models_toml
from attunebench.models.local_models import GEMMA
from attunebench.models.modelsfile import ModelEntry, load_models_file
from attunebench.tasks import load_tasks
from attunebench.tasks.preference import preference_task

console = Console()
TRAIN_CONVERSATIONS = 60
SAMPLE_CONVERSATIONS = 2
# Options bounding the tasks' cost, by task (a file beside this one).
OPTIONS = tomllib.loads(Path(__file__).with_suffix(".toml").read_text(encoding="utf-8"))


def say(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def has_preference_pair(conversation: Conversation) -> bool:
    return next(iter(preference_task().items([conversation])), None) is not None


def esconv(
    split: str, limit: int, keep: Callable[[Conversation], bool] = lambda _: True
) -> list[Conversation]:
    source = corpus_dir("esconv")
    if not source.is_dir():
        raise SystemExit(f"demo-llm needs ESConv at {source} (set ATTUNEBENCH_DATA_DIR)")
    found = []
    for conversation in ESConvImporter(variant="multiesc", split=split).read(source, Counter()):
        if not keep(conversation):
            continue
        found.append(conversation)
        if len(found) == limit:
            break
    return found


def baselines(train: Path) -> tuple[ModelEntry, ...]:
    fitted = {"train": str(train)}
    return (
        ModelEntry.from_spec("baseline/random"),
        ModelEntry(name="baseline/majority", spec="baseline/majority", options=fitted),
        ModelEntry(name="baseline/knn", spec="baseline/knn", options=fitted),
    )


def report(dirs: list[Path], out: Path) -> list[Path]:
    from attunebench.analysis import Options, build_summary, load_runs
    from attunebench.report import write_report

    summary = build_summary(load_runs(dirs, allow_mixed_datasets=True), Options())
    return write_report(summary, out)


def line(name: str, result: RunResult, seconds: float) -> str:
    t = result.totals
    return (
        f"{name}: {result.recorded}/{result.planned} items ({result.failed} failed) in "
        f"{seconds:.0f} s; {t.calls} calls, {t.input_tokens}+{t.output_tokens} tokens"
    )


def by_judging() -> tuple[list[str], list[str]]:
    """Every registered task: those run on ESConv (no judge), and those with a judge, run on
    the sample (the judged tasks need its recorded picks and needs)."""
    tasks = load_tasks()
    judged = [name for name in tasks.names() if tasks.get(name)().needs_judge]
    return [name for name in tasks.names() if name not in judged], judged


def main() -> None:
    parser = argparse.ArgumentParser(description="AttuneBench against a local Gemma 3 270M.")
    parser.add_argument("--out", type=Path, default=Path("demo-out") / "llm")
    parser.add_argument("--conversations", type=int, default=10, help="ESConv test conversations")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    args = parser.parse_args()

    data = args.out / "data"
    data.mkdir(parents=True, exist_ok=True)
    test = esconv("test", args.conversations, keep=has_preference_pair)
    write_conversations(data / "esconv-test.jsonl", test)
    write_conversations(data / "train.jsonl", esconv("valid", TRAIN_CONVERSATIONS))
    sample = read_conversations(sample_path())[:SAMPLE_CONVERSATIONS]
    write_conversations(data / "sample.jsonl", sample)
    unjudged, judged = by_judging()
    model = GEMMA.path()
    say(f"model: {model} (SHA-256 verified)")
    with LlamaServer(model, log=args.out / "llama-server.log", threads=args.threads) as server:
        say(f"{server.kind}: {server.base_url} ({server.threads} threads)")
        models_file = args.out / "models.toml"
        models_file.write_text(models_toml(server.base_url, max_tokens=48, answer="choice"))
        gemma = load_models_file(models_file)["gemma"]
        cache = args.out / "cache.sqlite"
        started = time.perf_counter()
        first = RunConfig(
            data=data / "esconv-test.jsonl",
            out=args.out / "run-esconv",
            models=(gemma, *baselines(data / "train.jsonl")),
            tasks=tuple(unjudged),
            task_options=OPTIONS,
            cache_path=cache,
        )
        esconv_result = asyncio.run(run(first))
        say(line("ESConv", esconv_result, time.perf_counter() - started))
        started = time.perf_counter()
        second = RunConfig(
            data=data / "sample.jsonl",
            out=args.out / "run-sample",
            models=(gemma,),
            judges=(gemma,),
            tasks=tuple(judged),
            task_options=OPTIONS,
            cache_path=cache,
        )
        sample_result = asyncio.run(run(second))
        say(line("sample", sample_result, time.perf_counter() - started))
    written = report([first.out, second.out], args.out)
    say(f"report: {written[-1]}")
    say(f"summary: {written[0]}")


if __name__ == "__main__":
    main()
