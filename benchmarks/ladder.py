"""The ladder: does the headline order four real models by size, and how much of each score
comes from reading the person?

Four local models (`examples/models.toml`, `make ladder-models`), smallest first: SmolLM2 135M
Instruct, Gemma 3 270M (base), Qwen2.5-Coder 0.5B and 1.5B Instruct (the family pair: same
family, same quantisation, same prompts, different size). All answer in choice mode, greedy and
seeded (seed 0), each served by its own llama.cpp server (`local/`) with every core, one model
at a time, so the server's timings are its own.

The slice (`--conversations N`, default 30): per task of `open-v1`, the N conversations carrying
its items with the shortest transcripts, taken from each corpus part in turn
(`engine.suite_run.suite_slices`); every model answers the same items, in conversation order, so
consecutive prompts share their prefix. The Qwen pair is also asked every item's person-hidden
twin (`run --person both`). References are fitted on the suite's train split, as `report` fits
a suite run's (the slices' runs are not suite runs, so it is handed over; see docs/report.md).
A second invocation resumes: the runs and their cache are kept under `--out`.

The second slice (`--second-slice N`, default 20; 0: none): the family pair again, on the next
N conversations per task after the first slice's by the same rule (`suite_slices(...,
skip=--conversations)`: disjoint from the first slice, which it leaves unchanged), on emotion,
preference and rating, the 1.5B with its person-hidden twins on emotion; runs under
OUT/second-slice/, sharing OUT's cache. It has a report of its own, and each claim of the first
slice (the pair's order per task, each person gap) gets a verdict (`planted.replication`):
holds on both slices, on one, or on neither (an interval covering 0 does not hold); a claim not
asked on the second slice (outcome; the 0.5B's gaps) is "first slice only".

It reports, from one `report` over every run (seeded, 2,000 resamples):
- each model's headline per task, with its interval;
- paired differences on the same items, as `report --compare` gives them (the same function,
  `analysis.comparisons.differences`, through `Options.differences`): 1.5B - 0.5B (the controlled
  pair) and 1.5B - 135M;
- per task, how many of the model pairs the headline orders by size (point values);
- the Qwen pair's person gap per task;
- the conversations needed to separate 1.5B from 0.5B on each task's headline at 80% power, a
  central figure and a range from the pilot's interval (`power`);
- the references' headlines and how each was fitted;
- per model, the share of wall time its llama.cpp server was busy (its own prompt and
  generation timings over the time it was up) and its prefix-cache share.

    .venv/bin/python benchmarks/ladder.py [--conversations 30] [--second-slice 20]
        [--models a,b] [--out DIR] [--results docs/results.md] [--quick]

`--quick`: SmolLM2 alone, with its twins, on 1 conversation per task, and as the "pair" of a
second slice of 1 conversation on emotion (the same code path, in seconds); its page goes to
OUT/quick/results.md. `--results FILE` writes the results page (`make ladder` writes
docs/results.md). The
last line is JSON: `models` (each `name`, `params`, `sha256`, `mode`), `headline`,
`differences` (per task and pair: value, interval, the headline `metric`, reason),
`pairs_in_size_order`, `person_gap`, `conversations_needed` (per task: the
headline `metric`, the pilot's difference with its interval, the central figure `needed`, the
range `needed_low` to `needed_high` (null where the pilot cannot bound it) as `range` states
it, and the `note` the results page prints), `references`, `server_busy_share`, `wall_s`, with
`conversations`, `seed`, `load` and
`answers_from_cache` (the share a resumed run did not ask again); `second_slice` (null where
none: its `conversations`, `after`, `tasks`, `models`, `person_hidden_twins`, and `headline`,
`differences`, `person_gap`, `conversations_needed` as above) and `replication` (`pair`;
`order` per task and `person_gap` per task and model: `holds` (both, first, second, neither or
first slice only), `direction`, `reversed`, `sentence`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Collection, Sequence
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from attunebench.analysis import Options, build_summary, load_runs
from attunebench.analysis.comparisons.power import power_curve
from attunebench.analysis.schema import Summary
from attunebench.data.locations import data_dir
from attunebench.engine import read_ledger
from attunebench.engine.runner import RunConfig, run
from attunebench.engine.stopping import main_stoppable
from attunebench.engine.suite_run import suite_slices
from attunebench.models.local_models import LOCAL_MODELS, QWEN, QWEN_1_5B, SMOLLM2
from attunebench.models.modelsfile import ModelEntry
from planted.replication import replication
from testkit import prerequisites
from testkit.local_entry import local_entry

REPO = Path(__file__).resolve().parents[1]
SUITE = "open-v1"
SEED = 0
# The family pair, larger first: the controlled difference; and the ladder's two ends.
PAIRS = ((QWEN_1_5B.name, QWEN.name), (QWEN_1_5B.name, SMOLLM2.name))
TWINS = frozenset({QWEN.name, QWEN_1_5B.name})  # asked with the person hidden as well
# The second slice: the family pair on the tasks whose order the first slice claims and whose
# items the next conversations still carry; the larger model's twins on emotion.
SECOND_TASKS = ("emotion", "preference", "rating")
SECOND_TWIN_TASKS = ("emotion",)
HELD_ORDER = ("both", "first", "second", "neither", "first slice only")  # the closing note's


def by_size(names: Sequence[str]) -> list[str]:
    return sorted(names, key=lambda name: LOCAL_MODELS[name].params)


def entries(names: Sequence[str], threads: int) -> list[ModelEntry]:
    """The models as `examples/models.toml` names them, with `threads` server threads."""
    return [local_entry(LOCAL_MODELS[name], threads=threads) for name in names]


def run_all(
    slices: list[RunConfig],
    models: list[ModelEntry],
    out: Path,
    twins: set[str],
    twin_tasks: Collection[str] | None = None,
    runs: str = "runs",
) -> list[Path]:
    """One run per (model, task) under OUT/RUNS, one model's server at a time, every slice
    sharing OUT's cache; the twins where asked (on `twin_tasks`, all where None)."""
    dirs = []
    for entry in models:
        for piece in slices:
            task = piece.tasks[0]
            twinned = entry.name in twins and (twin_tasks is None or task in twin_tasks)
            config = dataclasses.replace(
                piece,
                out=out / runs / entry.name / task,
                models=(entry,),
                cache_path=out / "cache.sqlite",
                person="both" if twinned else "shown",
                seed=SEED,
            )
            began = time.perf_counter()
            result = asyncio.run(run(config))
            print(
                f"{entry.name} {task}: {result.recorded}/{result.planned} items "
                f"({result.failed} failed) in {time.perf_counter() - began:.0f} s",
                file=sys.stderr,
            )
            dirs.append(config.out)
    return dirs


def interval(value: float | None, low: float | None, high: float | None) -> dict[str, Any]:
    return {"value": value, "ci_low": low, "ci_high": high}


def headlines(summary: Summary, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in summary.scores:
        if row.headline and row.model in names:
            out.setdefault(row.task, {})[row.model] = {
                **interval(row.value, row.ci_low, row.ci_high),
                "metric": row.metric,
                "n": row.n,
                "n_conversations": row.n_conversations,
            }
    return out


def ordered_by_size(found: dict[str, dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """Per task, of the pairs of models with a headline, how many the larger one leads."""
    out = {}
    for task, rows in found.items():
        valued = [n for n in by_size(names) if rows.get(n, {}).get("value") is not None]
        pairs = list(combinations(valued, 2))  # (smaller, larger)
        ordered = sum(rows[large]["value"] > rows[small]["value"] for small, large in pairs)
        out[task] = {"ordered": ordered, "pairs": len(pairs)}
    return out


def differences(summary: Summary) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for found in summary.differences:
        entry = interval(found.value, found.ci_low, found.ci_high)
        out.setdefault(found.task, {})[f"{found.a} - {found.b}"] = {
            **entry,
            "metric": found.metric,
            "reason": found.reason,
        }
    return out


def person_gaps(summary: Summary) -> dict[str, dict[str, Any]]:
    return {
        task: {
            model: {**interval(gap.value, gap.ci_low, gap.ci_high), "statement": gap.statement}
            for model, gap in by_model.items()
        }
        for task, by_model in summary.person_gap.items()
    }


def references(summary: Summary) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in summary.scores:
        if row.headline and row.model_kind == "reference":
            out.setdefault(row.task, {})[row.model] = {
                **interval(row.value, row.ci_low, row.ci_high),
                "fit": row.fit,
            }
    return out


def needed(dirs: Sequence[Path], tasks: Sequence[str], pair: tuple[str, str]) -> dict[str, Any]:
    """Conversations to separate the pair on each task's headline at 80% power, a central
    figure and a range (`attunebench power`)."""
    runs = load_runs(list(dirs), allow_mixed_datasets=True)
    if not set(pair) <= set(runs.frame.models):
        return {}
    rng = np.random.default_rng(SEED)
    out = {}
    for task in tasks:
        curve = power_curve(runs, task, *pair, rng=rng)
        out[task] = {
            "metric": curve.metric,
            "needed": curve.needed,
            "needed_low": curve.needed_low,
            "needed_high": curve.needed_high,
            "range": curve.range,
            **interval(curve.difference, curve.ci_low, curve.ci_high),
            "note": curve.note,
        }
    return out


def server_shares(dirs: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """Per model, its servers' busy and prefix-cache shares over every run it answered."""
    totals: dict[str, Any] = {}
    for rundir in dirs:
        ledger = read_ledger(rundir)
        for model, usage in (ledger.servers if ledger else {}).items():
            totals[model] = usage if model not in totals else totals[model].plus(usage)
    return {
        model: {
            "busy_share": usage.busy_share(),
            "prefix_cache_share": usage.cached_share(),
            "up_s": round(usage.up_s, 1),
            "requests": usage.requests,
        }
        for model, usage in totals.items()
    }


def answers_from_cache(dirs: Sequence[Path]) -> float | None:
    """The share of the models' answers served from the cache of an earlier invocation (a
    resumed ladder's wall time covers only the rest)."""
    calls = hits = 0
    for rundir in dirs:
        ledger = read_ledger(rundir)
        for entry in ledger.entries if ledger else ():
            calls, hits = calls + entry.calls, hits + entry.cache_hits
    return round(hits / (calls + hits), 3) if calls + hits else None


def second_slice(
    args: argparse.Namespace, names: list[str], out: Path
) -> tuple[dict[str, Any] | None, list[Path]]:
    """The family pair on the next `--second-slice` conversations per task after the first
    slice's (`skip`), disjoint from it: its headlines, paired difference, person gaps and
    power, from a report of its own. `--quick`: SmolLM2 alone, on emotion."""
    pair = names if args.quick else [name for name in PAIRS[0] if name in names]
    if not args.second_slice or not pair:
        return None, []
    tasks = SECOND_TWIN_TASKS if args.quick else SECOND_TASKS
    skip = args.conversations
    slices, train = suite_slices(SUITE, out, args.second_slice, tasks=tasks, skip=skip)
    twins = {by_size(pair)[-1]}
    models = entries(by_size(pair), args.threads)
    dirs = run_all(slices, models, out, twins, SECOND_TWIN_TASKS, runs="second-slice")
    compared = tuple(p for p in PAIRS[:1] if set(p) <= set(pair))
    runs = load_runs(dirs, allow_mixed_datasets=True)
    summary = build_summary(runs, Options(seed=SEED, differences=compared, train=train))
    return {
        "conversations": args.second_slice,
        "after": skip,
        "tasks": sorted(tasks),
        "models": by_size(pair),
        "person_hidden_twins": {name: list(SECOND_TWIN_TASKS) for name in twins},
        "headline": headlines(summary, pair),
        "differences": differences(summary),
        "person_gap": person_gaps(summary),
        "conversations_needed": needed(dirs, sorted(tasks), PAIRS[0]),
    }, dirs


def _verdict(first: dict[str, Any] | None, second: dict[str, Any] | None, asked: bool) -> Any:
    def ends(found: dict[str, Any] | None) -> tuple[float | None, float | None] | None:
        return None if found is None else (found.get("ci_low"), found.get("ci_high"))

    found = replication(ends(first), ends(second), asked)
    return {
        "holds": found.holds,
        "direction": found.direction,
        "reversed": found.reversed,
        "sentence": found.sentence(),
    }


def replications(figures: dict[str, Any]) -> dict[str, Any] | None:
    """Per claim of the first slice (the family pair's order per task; each person gap),
    whether it holds on both slices, one or neither (`planted.replication`); "first slice
    only" where the second slice did not ask it."""
    second = figures["second_slice"]
    if second is None:
        return None
    pair = " - ".join(PAIRS[0])
    order = {
        task: _verdict(
            found[pair],
            second["differences"].get(task, {}).get(pair),
            task in second["tasks"],
        )
        for task, found in figures["differences"].items()
        if pair in found
    }
    gaps: dict[str, dict[str, Any]] = {}
    for task, by_model in figures["person_gap"].items():
        for model, gap in by_model.items():
            asked = task in second["person_hidden_twins"].get(model, ())
            other = second["person_gap"].get(task, {}).get(model)
            gaps.setdefault(task, {})[model] = _verdict(gap, other, asked)
    return {"pair": pair, "order": order, "person_gap": gaps}


def measured(args: argparse.Namespace, names: list[str], out: Path) -> dict[str, Any]:
    started = time.perf_counter()
    load = [round(os.getloadavg()[0], 2)]
    slices, train = suite_slices(SUITE, out, args.conversations)
    twins = set(names) if args.quick else set(names) & TWINS
    dirs = run_all(slices, entries(names, args.threads), out, twins)
    pairs = tuple(p for p in PAIRS if set(p) <= set(names))
    runs = load_runs(dirs, allow_mixed_datasets=True)
    summary = build_summary(runs, Options(seed=SEED, differences=pairs, train=train))
    found = headlines(summary, names)
    second, second_dirs = second_slice(args, names, out)
    load.append(round(os.getloadavg()[0], 2))
    figures = {
        "models": [
            {
                "name": name,
                "params": LOCAL_MODELS[name].params,
                "sha256": LOCAL_MODELS[name].sha256,
                "mode": "choice",
                "person_hidden_twins": name in twins,
            }
            for name in names
        ],
        "conversations": args.conversations,
        "seed": SEED,
        "headline": found,
        "differences": differences(summary),
        "pairs_in_size_order": ordered_by_size(found, names),
        "person_gap": person_gaps(summary),
        "conversations_needed": needed(dirs, sorted(c.tasks[0] for c in slices), PAIRS[0]),
        "references": references(summary),
        "second_slice": second,
        "server_busy_share": server_shares(dirs + second_dirs),
        "wall_s": round(time.perf_counter() - started, 1),
        "answers_from_cache": answers_from_cache(dirs + second_dirs),
        "load": load,
    }
    return {**figures, "replication": replications(figures)}


def _number(found: dict[str, Any] | None) -> str:
    if not found or found.get("value") is None:
        return "—"
    low, high = found.get("ci_low"), found.get("ci_high")
    shown = f"{found['value']:.3f}"
    return shown if low is None or high is None else f"{shown} [{low:.3f}, {high:.3f}]"


def _served_min(figures: dict[str, Any]) -> str:
    return f"{sum(s['up_s'] for s in figures['server_busy_share'].values()) / 60:.0f}"


def _share(value: float | None) -> str:
    return "none" if not value else f"{value:.0%}"


def results_page(figures: dict[str, Any]) -> str:
    """docs/results.md: the ladder's table, its commit, date, machine and wall time."""
    names = [m["name"] for m in figures["models"]]
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    lines = [
        "# Results: the ladder",
        "",
        "<!-- Written by `make ladder` (benchmarks/ladder.py --results docs/results.md); not "
        "edited by hand. -->",
        "",
        f"Commit `{commit}`, {datetime.now(UTC):%Y-%m-%d}, {platform.machine()} with "
        f"{os.cpu_count()} cores. The models' servers were up {_served_min(figures)} min in all "
        "(each run's ledger, a resumed run's included); this invocation took "
        f"{figures['wall_s'] / 60:.0f} min (1-minute load {figures['load'][0]} at the start, "
        f"{figures['load'][-1]} at the end; {_share(figures['answers_from_cache'])} of the "
        "answers from the cache of an earlier invocation).",
        "",
        f"Four local models in choice mode (greedy, seed {figures['seed']}), on a slice of "
        f"`{SUITE}`: per task the {figures['conversations']} conversations carrying its items "
        "with the shortest transcripts, from each corpus part in turn. Gold: first-person (the "
        "person's own reports, feedback and ratings). Each cell is the task's headline with its "
        "95% cluster-bootstrap interval (2,000 resamples, seed 0); see "
        "[tasks](tasks.md) for what each headline is and its chance level.",
        "",
        "| task | " + " | ".join(names) + " | pairs in size order |",
        "|---|" + "---|" * len(names) + "---|",
    ]
    for task, rows in sorted(figures["headline"].items()):
        order = figures["pairs_in_size_order"].get(task, {})
        cells = " | ".join(_number(rows.get(name)) for name in names)
        lines.append(f"| {task} | {cells} | {order.get('ordered', 0)} of {order.get('pairs', 0)} |")
    lines += ["", *_detail_lines(figures), *_second_lines(figures), *_held_lines(figures)]
    return "\n".join(lines) + "\n"


def _second_lines(figures: dict[str, Any]) -> list[str]:
    """The second slice beside the first: the pair's headlines, its difference and each
    person gap, with the verdict of each claim."""
    second, verdicts = figures["second_slice"], figures["replication"]
    if second is None or verdicts is None:
        return []
    pair, names = verdicts["pair"], second["models"]
    lines = [
        "",
        "## The family pair on a second slice",
        "",
        f"Per task of {', '.join(second['tasks'])}, the next {second['conversations']} "
        f"conversations after the first slice's {second['after']}, by the same rule "
        "(disjoint from it); the pair alone, "
        + ", ".join(
            f"{m} with its person-hidden twins on {', '.join(t)}"
            for m, t in second["person_hidden_twins"].items()
        )
        + ". A claim holds on a slice where its interval excludes 0 on the claim's side "
        "(`planted.replication`); one not asked on the second slice is marked first slice "
        "only.",
        "",
        "| task | "
        + " | ".join(f"{n}, first | {n}, second" for n in names)
        + f" | {pair}, first | {pair}, second | the order |",
        "|---|" + "---|---|" * (len(names) + 1) + "---|",
    ]
    for task in sorted(set(verdicts["order"]) | set(second["tasks"])):
        verdict = verdicts["order"].get(task, {"sentence": "no pair to order"})
        firsts, seconds = figures["headline"].get(task, {}), second["headline"].get(task, {})
        cells = " | ".join(f"{_number(firsts.get(n))} | {_number(seconds.get(n))}" for n in names)
        ours = figures["differences"].get(task, {}).get(pair)
        theirs = second["differences"].get(task, {})
        lines.append(
            f"| {task} | {cells} | {_number(ours)} | {_number(theirs.get(pair))} "
            f"| {verdict['sentence']} |"
        )
    lines += [
        "",
        "| task | model | person gap, first | second | verdict |",
        "|---|---|---|---|---|",
    ]
    for task, by_model in sorted(verdicts["person_gap"].items()):
        for model, verdict in by_model.items():
            other = second["person_gap"].get(task, {}).get(model)
            shown = _number(other) if verdict["holds"] != "first slice only" else "not asked"
            gap = figures["person_gap"][task][model]
            lines.append(f"| {task} | {model} | {_number(gap)} | {shown} | {verdict['sentence']} |")
    return lines


def _held_lines(figures: dict[str, Any]) -> list[str]:
    """The closing note: which claims held on both slices, on one, on neither."""
    verdicts = figures["replication"]
    if verdicts is None:
        return []
    claims: dict[tuple[int, str], list[str]] = {}

    def add(verdict: dict[str, Any], claim: str) -> None:
        rank = HELD_ORDER.index(verdict["holds"])  # both first, first slice only last
        claims.setdefault((rank, verdict["sentence"]), []).append(claim)

    for task, verdict in sorted(verdicts["order"].items()):
        add(verdict, f"{task}, the order {verdicts['pair']}")
    for task, by_model in sorted(verdicts["person_gap"].items()):
        for model, verdict in by_model.items():
            add(verdict, f"{task}, {model}'s person gap")
    lines = ["", "## Which claims held on both slices", ""]
    for (_, said), named in sorted(claims.items()):
        lines.append(f"- {said[0].upper()}{said[1:]}: {'; '.join(named)}.")
    return lines


def _detail_lines(figures: dict[str, Any]) -> list[str]:
    lines = ["## Paired differences (same items)", ""]
    for task, found in sorted(figures["differences"].items()):
        for pair, value in found.items():
            why = f" ({value['reason']})" if value.get("reason") else ""
            lines.append(f"- {task}, {pair} ({value['metric']}): {_number(value)}{why}")
    lines += ["", "## Person gap (headline shown minus person-hidden)", ""]
    for task, by_model in sorted(figures["person_gap"].items()):
        for model, gap in by_model.items():
            lines.append(f"- {task}, {model}: {_number(gap)}. {gap.get('statement') or ''}")
    lines += ["", "## Conversations needed to separate the family pair (80% power)", ""]
    lines += [
        "Per task, from this slice as a pilot (`attunebench power`): the pair's paired "
        "difference of the headline named (the same statistic and items as above, its "
        "interval resampled afresh), "
        "the conversations at which the report's test of that difference reaches 80% power "
        "if the pilot's difference were the truth (the central figure), and the range that "
        "the ends of the pilot's interval give (its end nearer 0 the range's upper end; none "
        "where the interval reaches 0). See [the report](report.md#power).",
        "",
    ]
    second = (figures["second_slice"] or {}).get("conversations_needed", {})
    for task, found in sorted(figures["conversations_needed"].items()):
        lines.append(f"- {task}: {found['note']}")
        if task in second:
            lines.append(f"  - the second slice as the pilot: {second[task]['note']}")
    lines += ["", "## References (fitted as the report fits them)", ""]
    for task, found in sorted(figures["references"].items()):
        shown = "; ".join(
            f"{name} {_number(v)} ({v.get('fit') or '?'})" for name, v in found.items()
        )
        lines.append(f"- {task}: {shown}")
    lines += ["", "## The servers", ""]
    for model, share in figures["server_busy_share"].items():
        busy, cached = share["busy_share"], share["prefix_cache_share"]
        lines.append(
            f"- {model}: busy {busy:.0%} of {share['up_s']:.0f} s up, prefix cache "
            f"{cached:.0%} of prompt tokens"
            if busy is not None and cached is not None
            else f"- {model}: no timings"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=30, help="per task")
    parser.add_argument("--models", help="comma-separated names (default: all four)")
    parser.add_argument("--out", type=Path, default=REPO / "ladder-out")
    parser.add_argument("--results", type=Path, help="write the results page here")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument(
        "--second-slice",
        type=int,
        default=20,
        metavar="N",
        help="the family pair on the next N conversations per task (0: none)",
    )
    parser.add_argument("--quick", action="store_true", help="SmolLM2, 1 conversation a task")
    args = parser.parse_args()
    if args.quick:
        args.conversations, args.models = 1, SMOLLM2.name
        args.second_slice = min(args.second_slice, 1)
    asked = args.models.split(",") if args.models else list(LOCAL_MODELS)
    unknown = [name for name in asked if name not in LOCAL_MODELS]
    if unknown:
        parser.error(f"unknown model {unknown[0]!r}; the ladder's: {', '.join(LOCAL_MODELS)}")
    names = by_size(asked)
    prerequisites.shared_data(data_dir())
    prerequisites.llama_server()
    for name in names:
        prerequisites.local_model(LOCAL_MODELS[name])
    out = args.out / "quick" if args.quick else args.out
    figures = measured(args, names, out)
    page = results_page(figures)  # written by --quick too, so that the page's code runs
    results = out / "results.md" if args.quick and args.results is None else args.results
    if results is not None:
        results.write_text(page, encoding="utf-8")
    print(json.dumps(figures))


if __name__ == "__main__":
    main_stoppable(main)  # SIGTERM stops the runs' servers as Ctrl-C does
