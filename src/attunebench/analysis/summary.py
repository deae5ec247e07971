"""Build `summary.json`: every score, correlation, diagnostic and warning of merged runs.

One seeded `numpy.random.SeedSequence` is split into independent streams, one per component
(bootstrap, rank permutations, subgroup permutations), so a seed fixes every number and
adding a component never shifts another's randomness.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

import numpy as np
from threadpoolctl import threadpool_limits

from attunebench.analysis import diagnostics as diag
from attunebench.analysis.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, ClusterBootstrap
from attunebench.analysis.contexts import context_differences
from attunebench.analysis.discriminability import discriminability, ranked
from attunebench.analysis.frame import FloatArray, Frame, IntArray
from attunebench.analysis.judges import AUDIT_TASK, judge_agreement
from attunebench.analysis.labels import LABEL_SETS, label_counts
from attunebench.analysis.loading import Runs, paused_gc
from attunebench.analysis.provenance import Roster, provenance
from attunebench.analysis.ranks import DEFAULT_PERMUTATIONS, rank_correlation
from attunebench.analysis.rows import (
    RecordMeta,
    record_notices,
    score_rows,
    task_infos,
    uneven_items,
)
from attunebench.analysis.schema import Diagnostics, GroupScore, Notice, Settings, Summary, TaskInfo
from attunebench.analysis.scores import MetricScores, headline, secondary
from attunebench.analysis.subgroups import (
    DEFAULT_MIN_CONVERSATIONS,
    adjust,
    fields,
    subgroup_scores,
)

Cluster = Literal["conversation", "participant"]


@dataclass(frozen=True)
class Options:
    seed: int = 0
    resamples: int = DEFAULT_RESAMPLES
    corpus_resamples: int = 500
    permutations: int = DEFAULT_PERMUTATIONS
    subgroup_permutations: int = 2000
    cluster: Cluster = "conversation"
    confidence: float = DEFAULT_CONFIDENCE
    min_subgroup_conversations: int = DEFAULT_MIN_CONVERSATIONS
    worst_items: int = 5


def cluster_codes(frame: Frame, runs: Runs, cluster: Cluster) -> IntArray:
    """Conversation code -> cluster code (the conversation itself, or its participant)."""
    if cluster == "conversation":
        return np.arange(len(frame.conversations), dtype=np.int64)
    missing = [c for c in frame.conversations if c not in runs.conversations]
    if missing:
        raise ValueError(
            f"clustering by participant needs the dataset; {len(missing)} "
            f"conversations not found in it (e.g. {missing[0]!r})"
        )
    owners = [
        (conversation.participant.id if conversation.participant else f"conversation:{cid}")
        for cid in frame.conversations
        for conversation in [runs.conversations[cid]]
    ]
    names = sorted(set(owners))
    return np.array([names.index(o) for o in owners], dtype=np.int64)


LabelTables = dict[tuple[str, str], tuple[list[str], FloatArray]]


def label_tables(frame: Frame, tasks: list[TaskInfo]) -> LabelTables:
    """Label counts of every cell whose task has label sets, computed once and shared."""
    return {
        (info.name, variant): label_counts(
            frame.records_at(frame.cell(info.name, variant) & frame.scored),
            LABEL_SETS[info.name][0],
        )
        for info in tasks
        if info.name in LABEL_SETS
        for variant in info.variants
    }


def diagnostics(
    frame: Frame,
    runs: Runs,
    bootstrap: ClusterBootstrap,
    tasks: list[TaskInfo],
    tables: LabelTables,
    options: Options,
    rng: np.random.Generator,
) -> tuple[Diagnostics, list[Notice]]:
    positions = diag.position_bins(frame, runs.conversations)
    intensities = diag.intensity_bins(frame, runs.conversations)
    prepared = fields(frame, runs.conversations, options.subgroup_permutations, rng)
    confusion, label_f1, by_position, by_intensity, worst = [], [], [], [], []
    subgroups: list[GroupScore] = []
    small: set[tuple[str, str]] = set()
    for info in tasks:
        task, variant = info.name, info.headline_variant
        if task == "emotion":
            confusion += diag.confusion(frame, task, variant)
        if (task, variant) in tables:
            label_f1 += diag.label_f1(frame, task, variant, *tables[task, variant])
        by_position += diag.binned_scores(frame, bootstrap, task, variant, "turn position",
                                          diag.POSITIONS, positions)  # fmt: skip
        by_intensity += diag.binned_scores(frame, bootstrap, task, variant, "intensity",
                                           diag.INTENSITIES, intensities)  # fmt: skip
        rows, found = subgroup_scores(frame, bootstrap, task, variant, prepared,
                                      options.min_subgroup_conversations)  # fmt: skip
        subgroups += rows
        small |= found
        worst += diag.worst_items(frame, task, variant, runs.conversations, options.worst_items)
    notices = small_subgroups(small, options.min_subgroup_conversations)
    details = Diagnostics(
        confusion=confusion, label_f1=label_f1, turn_position=by_position,
        intensity=by_intensity, subgroups=adjust(subgroups), worst_items=worst,
    )  # fmt: skip
    return details, notices


def small_subgroups(found: set[tuple[str, str]], minimum: int) -> list[Notice]:
    """One warning per field for the levels too small to compare, whatever the task."""
    levels: dict[str, set[str]] = defaultdict(set)
    for name, level in found:
        levels[name].add(level)
    return [
        Notice(kind="small_subgroup", message=(
            f"{name}: {', '.join(sorted(values))} under {minimum} conversations (in the level "
            "or the rest, for some model or task): shown, not compared"))
        for name, values in sorted(levels.items())
    ]  # fmt: skip


def build_summary(runs: Runs, options: Options | None = None) -> Summary:
    # The matrix products here are small (resamples x conversations): BLAS threads cost more
    # to start and synchronise than they save (a third of the time on 2 cores).
    with paused_gc(), threadpool_limits(limits=1, user_api="blas"):
        return _build(runs, options or Options())


def _build(runs: Runs, options: Options) -> Summary:
    if not runs.records:
        raise ValueError(f"no records yet in {', '.join(str(r.path) for r in runs.runs)}")
    frame = Frame.from_records(runs.records)
    streams = [np.random.default_rng(s) for s in np.random.SeedSequence(options.seed).spawn(3)]
    bootstrap = ClusterBootstrap.create(
        cluster_codes(frame, runs, options.cluster),
        options.resamples,
        streams[0],
        options.confidence,
    )
    meta, roster = RecordMeta.scan(frame), Roster.of(runs)
    tasks = task_infos(frame, meta, skip=AUDIT_TASK)
    headline_of = {info.name: info.headline_variant for info in tasks}
    tables = label_tables(frame, tasks)
    metric_scores: list[MetricScores] = []
    for info in tasks:
        for variant in info.variants:
            table = tables.get((info.name, variant), ([], None))[1]
            metric_scores.append(headline(frame, bootstrap, info.name, variant))
            metric_scores += secondary(
                frame, bootstrap, info.name, variant, options.corpus_resamples, table
            )
    headlines = {
        s.task: s for s in metric_scores if s.metric == "score" and headline_of[s.task] == s.variant
    }
    rows = score_rows(frame, metric_scores, meta, roster, headline_of)
    details, detail_notices = diagnostics(
        frame, runs, bootstrap, tasks, tables, options, streams[2]
    )
    subjects = sorted({r.model for r in rows})
    agreement = judge_agreement(frame, bootstrap, roster)
    judges = sorted({a.judge for a in agreement} | {j for info in tasks for j in info.judges})
    return Summary(
        provenance=provenance(runs, roster, subjects, judges),
        settings=Settings(
            seed=options.seed,
            resamples=options.resamples,
            corpus_resamples=min(options.corpus_resamples, options.resamples),
            permutations=options.permutations,
            cluster=options.cluster,
            confidence=options.confidence,
            min_subgroup_conversations=options.min_subgroup_conversations,
        ),
        tasks=tasks,
        scores=rows,
        rank_correlation=rank_correlation(
            headlines,
            frame.models,
            permutations=options.permutations,
            rng=streams[1],
            confidence=options.confidence,
        ),
        discriminability=ranked([discriminability(s, frame.models) for s in headlines.values()]),
        context_modes=context_differences(frame, bootstrap),
        judge_agreement=agreement,
        diagnostics=details,
        warnings=[*runs.notices, *record_notices(rows), *uneven_items(frame, tasks),
                  *detail_notices],
    )


def summary_json(summary: Summary) -> str:
    """The summary as JSON; refuses NaN and infinities (they must be null with a reason)."""
    return json.dumps(summary.model_dump(mode="json"), indent=2, allow_nan=False) + "\n"
