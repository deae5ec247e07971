"""`attunebench demo`: the whole pipeline offline, with no keys, in a couple of minutes
(docs/tutorial.md). The fitted baselines learn from a disjoint train split: alternate sample
conversations (and ESConv train ones).
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from itertools import islice
from pathlib import Path
from typing import Annotated

import typer

from attunebench.cli.consoles import CommandConsole
from attunebench.cli.errors import folder_out
from attunebench.cli.options import RESAMPLES, Resamples, Seed
from attunebench.cli.run import context_options, quiet_model_loading, skipped_lines
from attunebench.data.importers import ESConvImporter
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.locations import corpus_dir, fetch_command
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.engine import RunConfig, run, task_names
from attunebench.models.modelsfile import ModelEntry

out = CommandConsole()
BASELINES = ("baseline/random", "baseline/majority", "baseline/lexicon", "baseline/knn")
FITTED = ("baseline/majority", "baseline/knn")
JUDGE = "proxy/minilm"


def _esconv(importer: ESConvImporter, limit: int) -> list[Conversation]:
    """Up to `limit` ESConv conversations, or none when the shared corpora are absent."""
    source = corpus_dir("esconv")
    if limit == 0 or not source.is_dir():
        return []
    return list(islice(importer.read(source, Counter()), limit))


def prepare_data(folder: Path, esconv: int, train_esconv: int) -> tuple[Path, Path, str]:
    """Write the evaluated data and the train split; returns their paths and what they hold."""
    sample = read_conversations(sample_path())
    evaluated, train = sample[1::2], sample[0::2]
    extra = _esconv(ESConvImporter(variant="multiesc", split="test"), esconv)
    evaluated += extra
    train += _esconv(ESConvImporter(variant="hf", split="train"), train_esconv if extra else 0)
    data, train_file = folder / "eval.jsonl", folder / "train.jsonl"
    write_conversations(data, evaluated)
    write_conversations(train_file, train)
    where = f"{len(sample[1::2])} sample conversations"
    fetch = fetch_command(["esconv"])
    where += f" + {len(extra)} ESConv" if extra else f" (no ESConv found: sample only; {fetch})"
    return data, train_file, where


def say(text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Folder for the data, run and report.")],
    esconv: Annotated[
        int, typer.Option(min=0, help="ESConv conversations to evaluate, when present.")
    ] = 8,
    train_esconv: Annotated[
        int, typer.Option(min=0, help="ESConv conversations in the train split.")
    ] = 40,
    resamples: Resamples = RESAMPLES,
    seed: Seed = 0,
) -> None:
    """Run the sample (and some ESConv) with four baselines and the proxy judge, then report."""
    from attunebench.analysis import Options, build_summary, load_runs
    from attunebench.report import write_report

    folder_out(out_dir)
    if not sys.stderr.isatty():  # a log or a pipe: no bar, and no model-loading bars either
        quiet_model_loading()
    folder = out_dir / "data"
    folder.mkdir(parents=True, exist_ok=True)
    data, train, where = prepare_data(folder, esconv, train_esconv)
    say(f"evaluating {where}; baselines fitted on {train}")
    config = RunConfig(
        data=data,
        out=out_dir / "run",
        models=tuple(
            ModelEntry(
                name=spec, spec=spec, options={"train": str(train)} if spec in FITTED else {}
            )
            for spec in BASELINES
        ),
        judges=(ModelEntry.from_spec(JUDGE),),
        task_options=context_options(task_names(["all"]), "both"),  # blind and informed
        seed=seed,
        cache_path=out_dir / "cache.sqlite",
        progress=sys.stderr.isatty(),
        check_servers=False,
    )
    result = asyncio.run(run(config))
    for line in skipped_lines(result):
        say(line)
    say(f"{result.recorded}/{result.planned} items recorded, {result.failed} failed")
    summary = build_summary(load_runs([config.out]), Options(seed=seed, resamples=resamples))
    written = write_report(summary, out_dir)
    say(f"run directory: {config.out}")
    say(f"summary: {written[0]}")
    say(f"report: {written[-1]}")
