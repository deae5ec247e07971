"""Simulated users checked against the people of the first-person corpora: the real run of
docs/simulators.md.

The slice: the first N conversations carrying each part's main first-person gold (as the open
suite draws them) of MultiESC's test split (a seeker's feedback; with their intensities and
survey), ConvAI1's human-bot test chats (a volunteer's thumb on a bot message; with their
ratings) and Topical-Chat's test_freq chats (agent_1's side: a message's self-label; with
the partner's messages rated), as the importers read them, written to OUT/slice.jsonl. Each
simulator (a models-file name or a spec) is validated on it (`simulators validate`), its
figures written to OUT/<simulator>/simulators.json; the models of `--runs` are ranked, less
any run of the simulator itself. `--rank-models a,b` first runs those models (choice mode,
every task with no judge) on the slice's conversations of `--rank-corpora` into
OUT/runs/<model>, to rank. Each validation and run is timed, with the machine's 1-minute load
before and after it (others' work on a shared machine moves the time).

The last line is JSON: `slice` (conversations per corpus), `runs` (per ranked model, its
`wall_s` and `load`), and per simulator `wall_s`, `load`,
`replay` (task -> value, interval, crowd, minus_crowd), `realism`, `ranking`, `noise_floor`
and `leaks`. `--quick` validates `sim/person-oracle` on 2 conversations of each corpus.

    .venv/bin/python benchmarks/simulators.py [--quick] [--simulators a,b]
        [--models-file examples/models.toml] [--conversations 2] [--turns 3] [--exchanges 2]
        [--seeds 3] [--runs DIR ...] [--rank-models a,b] [--rank-corpora esconv,convai1]
        [--include-baselines] [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from attunebench.analysis.schema import Estimate
from attunebench.cli.simulators import show
from attunebench.data.importers import ConvAI1Importer, ESConvImporter, TopicalChatImporter
from attunebench.data.jsonl import write_conversations
from attunebench.data.locations import corpus_dir
from attunebench.data.schema import Conversation
from attunebench.engine import RunConfig, default_cache_path, read_run_info, run
from attunebench.models.modelsfile import ModelEntry, load_models_file, resolve_model
from attunebench.simulators import Plan, Sampling, SimulatorsReport, validate


def fed_back(conversation: Conversation) -> bool:
    return any(turn.feedback is not None for turn in conversation.turns)


def thumbed(conversation: Conversation) -> bool:
    replies = (turn.continued_response() for turn in conversation.turns)
    return any(reply is not None and reply.rating is not None for reply in replies)


def labelled(conversation: Conversation) -> bool:
    return any(turn.state is not None and turn.state.emotions for turn in conversation.turns)


# Each corpus: its name, its importer, and whether a conversation carries its main gold.
CORPORA: dict[str, tuple[str, Callable[[], Any], Callable[[Conversation], bool]]] = {
    "esconv": (
        "MultiESC test",
        lambda: ESConvImporter(variant="multiesc", split="test"),
        fed_back,
    ),
    "convai1": (
        "ConvAI1 human-bot test",
        lambda: ConvAI1Importer(variant="human-bot", split="test"),
        thumbed,
    ),
    "topical_chat": (
        "Topical-Chat test_freq, agent_1",
        lambda: TopicalChatImporter(split="test_freq", perspective="agent_1"),
        labelled,
    ),
}


def sliced(
    count: int, corpora: Iterable[str] = CORPORA
) -> tuple[list[Conversation], dict[str, int]]:
    """The first `count` conversations of each corpus that carry its main gold (an error
    names a missing corpus)."""
    found: list[Conversation] = []
    counts = {}
    for folder in corpora:
        name, importer, carries = CORPORA[folder]
        source = corpus_dir(folder)
        if not source.is_dir():
            raise SystemExit(f"{name}: no corpus at {source} (set ATTUNEBENCH_DATA_DIR)")
        read = importer().read(source, Counter())
        taken: Iterator[Conversation] = islice(filter(carries, read), count)
        part = list(taken)
        counts[name] = len(part)
        found += part
    return found, counts


def load() -> float:
    return os.getloadavg()[0]


def ranked_runs(simulator: ModelEntry, runs: list[Path]) -> list[Path]:
    """The runs none of whose models is the simulator."""
    ours = {simulator.name, simulator.spec}
    kept = []
    for rundir in runs:
        info = read_run_info(rundir)
        theirs = {m.name for m in info.models} | {m.spec for m in info.models} if info else set()
        if info is not None and not ours & theirs:
            kept.append(rundir)
    return kept


def figures(report: SimulatorsReport) -> dict[str, Any]:
    def shown(found: Estimate | None) -> list[float | None] | None:
        return None if found is None else [found.value, found.ci_low, found.ci_high]

    realism = report.realism
    return {
        "replay": {
            task: {
                "metric": f.metric,
                "value": shown(f),
                "crowd": shown(f.crowd),
                "minus_crowd": shown(f.minus_crowd),
                "items": f.n_items,
                "invalid": f.n_invalid,
            }
            for task, f in report.replay.items()
        },
        "realism": {
            "auroc": shown(realism.auroc),
            "emotion_by_third": shown(realism.emotion_by_third),
            "negative_labels": [
                shown(realism.emotion_by_third.negative_people),
                shown(realism.emotion_by_third.negative_simulator),
            ],
            "intensity_change": shown(realism.intensity_change),
            "intensity_people_simulator": [
                shown(realism.intensity_change.people),
                shown(realism.intensity_change.simulator),
            ],
            "negative_feedback_share": shown(realism.negative_feedback_share),
            "feedback_people_simulator": [
                shown(realism.negative_feedback_share.people),
                shown(realism.negative_feedback_share.simulator),
            ],
        },
        "ranking": {
            "spearman": shown(report.ranking.spearman),
            "by_task": {t: shown(r.spearman) for t, r in report.ranking.by_task.items()},
            "flips": len(report.ranking.flips),
        },
        "noise_floor": {name: floor.spread for name, floor in report.noise_floor.items()},
        "leaks": {
            "messages": report.leaks.messages,
            "instructions": report.leaks.instructions,
            "supporter_role": report.leaks.supporter_role,
        },
    }


async def rank_runs(
    models: list[ModelEntry], data: Path, out: Path
) -> tuple[list[Path], dict[str, Any]]:
    """Each model's run on `data` (every task with no judge), timed."""
    made, timing = [], {}
    for model in models:
        before, started = load(), time.perf_counter()
        rundir = out / model.name.replace("/", "_")
        config = RunConfig(data=data, out=rundir, models=(model,), progress=False)
        await run(config)
        wall = time.perf_counter() - started
        timing[model.name] = {
            "wall_s": round(wall, 1),
            "load": [round(before, 2), round(load(), 2)],
        }
        made.append(rundir)
    return made, timing


async def one(plan: Plan) -> tuple[SimulatorsReport, dict[str, Any]]:
    before, started = load(), time.perf_counter()
    report = await validate(plan)
    wall = time.perf_counter() - started
    return report, {"wall_s": round(wall, 1), "load": [round(before, 2), round(load(), 2)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--simulators", default="qwen2.5-coder-0.5b-instruct,qwen2.5-coder-1.5b-instruct"
    )
    parser.add_argument("--models-file", type=Path, default=Path("examples/models.toml"))
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--exchanges", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--runs", type=Path, nargs="*", default=[])
    parser.add_argument("--rank-models", default="")
    parser.add_argument("--rank-corpora", default="esconv,convai1")
    parser.add_argument("--include-baselines", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("simulators-out"))
    args = parser.parse_args()
    if args.quick:
        args.simulators, args.conversations, args.seeds = "sim/person-oracle", 2, 1
    conversations, counts = sliced(args.conversations)
    data = args.out / "slice.jsonl"
    write_conversations(data, conversations)
    known = load_models_file(args.models_file) if args.models_file.is_file() else {}
    runs = list(args.runs)
    run_timing: dict[str, Any] = {}
    if args.rank_models:
        ranked = [resolve_model(ref, known) for ref in args.rank_models.split(",")]
        to_rank = args.out / "rank.jsonl"
        write_conversations(to_rank, sliced(args.conversations, args.rank_corpora.split(","))[0])
        made, run_timing = asyncio.run(rank_runs(ranked, to_rank, args.out / "runs"))
        runs += made
    results = {}
    for ref in args.simulators.split(","):
        simulator = resolve_model(ref, known)
        plan = Plan(
            simulator=simulator,
            data=(data,),
            out=args.out / ref.replace("/", "_"),
            runs=tuple(ranked_runs(simulator, runs)),
            include=frozenset({"baseline"}) if args.include_baselines else frozenset(),
            sampling=Sampling(seeds=tuple(range(args.seeds))),
            exchanges=args.exchanges,
            per_conversation=args.turns,
            resamples=200 if args.quick else 2000,
            cache_path=None if args.quick else default_cache_path(),
            concurrency=1,
        )
        report, timing = asyncio.run(one(plan))
        show(report)
        results[ref] = {**timing, **figures(report)}
    print(json.dumps({"slice": counts, "runs": run_timing, "simulators": results}))


if __name__ == "__main__":
    main()
