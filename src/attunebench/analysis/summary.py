"""Build `summary.json`: every score, correlation, diagnostic and warning of merged runs.

One seeded `numpy.random.SeedSequence` is split into independent streams, one per component
(bootstrap, rank permutations, subgroup permutations, reliability splits), so a seed fixes
every number and adding a component never shifts another's randomness.

Cross-model statistics (rank agreement, reliability, discriminability) use the models under
test only, on the items every model under test answered (see `cells`; yardsticks are scored on
those items where they have them). Below `min_conversations`
conversations no interval and no verdict is given anywhere: only the point values and why.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from threadpoolctl import threadpool_limits

from attunebench.analysis.agreement.discriminability import ranked, ratios, task_discriminability
from attunebench.analysis.agreement.ranks import DEFAULT_PERMUTATIONS, rank_correlation
from attunebench.analysis.agreement.reliability import SplitHalf, conversation_table, split_half
from attunebench.analysis.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    ClusterBootstrap,
    Minimum,
)
from attunebench.analysis.breakdowns import diagnostics as diag
from attunebench.analysis.breakdowns.subgroups import (
    DEFAULT_MIN_CONVERSATIONS,
    adjust,
    adjust_interactions,
    fields,
    interactions,
    subgroup_scores,
)
from attunebench.analysis.cells import Cell, build_cell
from attunebench.analysis.comparisons.contexts import context_differences
from attunebench.analysis.comparisons.differences import Resampling, model_differences
from attunebench.analysis.comparisons.leads import leads, no_subjects
from attunebench.analysis.comparisons.person_gap import person_gaps, twins_alone
from attunebench.analysis.comparisons.rollouts import rollouts
from attunebench.analysis.frame import Frame, IntArray, headline_variant
from attunebench.analysis.judges.audit import audits_judges, judge_agreement
from attunebench.analysis.judges.bias import judge_bias
from attunebench.analysis.judges.corrected import judge_notices, response_corrected
from attunebench.analysis.judges.panel import judge_panel
from attunebench.analysis.judges.verdict_table import verdict_table
from attunebench.analysis.loading import Runs, paused_gc
from attunebench.analysis.provenance import Roster, provenance
from attunebench.analysis.references.ceiling import ceilings
from attunebench.analysis.references.predictors import reference_rows
from attunebench.analysis.rows import (
    left_out_notices,
    part_notices,
    record_notices,
    score_rows,
    task_info,
)
from attunebench.analysis.schema import (
    Diagnostics,
    DiscriminabilityReport,
    GroupScore,
    Interaction,
    JudgeAgreement,
    ModelDifference,
    Notice,
    Provenance,
    RankCorrelation,
    ScoreRow,
    Settings,
    Summary,
    TaskInfo,
)
from attunebench.analysis.scores import MetricScores, headline_metric, metric_scores
from attunebench.analysis.train_split import train_split

Cluster = Literal["conversation", "participant"]


# Fewer: no interval, no verdict. Intervals are expanded for few clusters (bootstrap.py); a
# model's 95% interval then covered its planted mean in 92.6% of 2,000 simulated studies at 5
# conversations, 93.6% at 10, 95.0% at 20 and 95.6% at 50 (planted.studies.coverage; plain
# percentile intervals: 85% at 5, 88.5% at 10). 10 is the least with 93% or more.
MIN_CONVERSATIONS = 10


@dataclass(frozen=True)
class Options:
    seed: int = 0
    resamples: int = DEFAULT_RESAMPLES
    corpus_resamples: int = 500  # resamples for split-half reliability (it also splits)
    permutations: int = DEFAULT_PERMUTATIONS
    subgroup_permutations: int = 2000
    cluster: Cluster = "conversation"
    confidence: float = DEFAULT_CONFIDENCE
    min_subgroup_conversations: int = DEFAULT_MIN_CONVERSATIONS
    worst_items: int = 5
    min_conversations: int = MIN_CONVERSATIONS
    all_items: bool = False  # score every answered item rather than the common ones
    include_simulated: bool = False  # count `sim/` models as models under test
    # pairs of models under test (a, b) whose headlines are compared on each task: a minus b
    differences: tuple[tuple[str, str], ...] = ()
    train: Path | None = None  # the references' train split (None: a suite's own, else folds)


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


Cells = dict[tuple[str, str], Cell]


@dataclass(frozen=True)
class Streams:
    """The analysis's random streams, one per component, split from its seed in this order
    (so a seed fixes every number, and adding a component never shifts another's draws)."""

    bootstrap: np.random.Generator  # the cluster resamples every interval shares
    ranks: np.random.Generator  # the rank correlations' permutations
    subgroups: np.random.Generator  # the subgroup and interaction permutations
    reliability: np.random.Generator  # the split-half reliability's splits

    @classmethod
    def of(cls, seed: int) -> Streams:
        return cls(*(np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4)))


@dataclass(frozen=True)
class Basis:
    """What every step of the summary reads: the runs and the options asked for, the records
    as arrays, the resampling and its random streams, who is under test, the cells, and each
    task's headline variant."""

    runs: Runs
    options: Options
    frame: Frame
    bootstrap: ClusterBootstrap
    streams: Streams
    roster: Roster
    minimum: Minimum
    subjects: list[int]
    cells: Cells
    headline_of: dict[str, str]


def diagnostics(basis: Basis) -> tuple[Diagnostics, list[Notice]]:
    frame, bootstrap, minimum = basis.frame, basis.bootstrap, basis.minimum
    conversations, options, subjects = basis.runs.conversations, basis.options, basis.subjects
    positions = diag.position_bins(frame, conversations)
    intensities = diag.intensity_bins(frame, conversations)
    prepared = fields(frame, conversations, options.subgroup_permutations, basis.streams.subgroups)
    confusion, label_f1, by_position, by_intensity, worst = [], [], [], [], []
    curves = []
    subgroups: list[GroupScore] = []
    found: list[Interaction] = []
    small: set[tuple[str, str]] = set()
    for task, variant in sorted(basis.headline_of.items()):
        cell = basis.cells[task, variant]
        labelled = diag.label_sets(frame, cell)
        confusion += diag.confusion(frame, cell, labelled)
        curves += diag.calibration(frame, cell)
        label_f1 += diag.label_f1(frame, cell, labelled)
        scored = diag.ScoredItems.of(frame, cell)  # read once for each binning of them
        by_position += diag.binned_scores(
            frame,
            bootstrap,
            scored,
            "turn position",
            diag.POSITIONS,
            positions[scored.rows],
            minimum,
        )
        by_intensity += diag.binned_scores(
            frame,
            bootstrap,
            scored,
            "intensity",
            diag.INTENSITIES,
            intensities[scored.rows],
            minimum,
        )
        least = options.min_subgroup_conversations
        rows, too_small = subgroup_scores(
            frame, bootstrap, scored, prepared, least, minimum, subjects
        )
        subgroups += rows
        small |= too_small
        found += interactions(frame, cell, scored, prepared, subjects, least, minimum)
        worst += diag.worst_items(frame, cell, conversations, options.worst_items)
    notices = small_subgroups(small, options.min_subgroup_conversations)
    details = Diagnostics(
        confusion=confusion,
        label_f1=label_f1,
        turn_position=by_position,
        intensity=by_intensity,
        subgroups=adjust(subgroups),
        interactions=adjust_interactions(found),
        calibration=curves,
        worst_items=worst,
    )
    return details, notices


def small_subgroups(found: set[tuple[str, str]], minimum: int) -> list[Notice]:
    """One warning per field for the levels too small to compare, whatever the task."""
    levels: dict[str, set[str]] = defaultdict(set)
    for name, level in found:
        levels[name].add(level)
    return [
        Notice(
            kind="small_subgroup",
            message=(
                f"{name}: {', '.join(sorted(values))} under {minimum} conversations (in the level "
                "or the rest, for some model or task): shown, not compared"
            ),
        )
        for name, values in sorted(levels.items())
    ]


def build_summary(runs: Runs, options: Options | None = None) -> Summary:
    # The matrix products here are small (resamples x conversations): BLAS threads cost more
    # to start and synchronise than they save (a third of the time on 2 cores).
    with paused_gc(), threadpool_limits(limits=1, user_api="blas"):
        return _build(runs, options or Options())


def cell_notices(frame: Frame, cells: Cells, minimum: Minimum) -> list[Notice]:
    """A warning for each task and variant whose scored items fall in too few clusters."""
    out = []
    for (task, variant), cell in sorted(cells.items()):
        reason = minimum.of(frame.conversation[cell.mask & frame.scored])
        if reason is not None:
            where = f"{task} ({variant})" if variant else task
            out.append(
                Notice(kind="too_few_conversations", task=task, message=f"{where}: {reason}")
            )
    return out


@dataclass(frozen=True)
class Claims:
    rank_correlation: RankCorrelation
    discriminability: DiscriminabilityReport


def claims(basis: Basis, headlines: Mapping[str, MetricScores]) -> Claims:
    """The paper's two claims, on the models under test: rank agreement between tasks (with
    the reliability ceiling) and discriminability. A task's intervals and verdicts need its
    models' scored items to fall in `minimum` clusters; a pair of tasks needs both. With no
    model under test there is nothing to count: the hint says why and what would change it."""
    frame, bootstrap, cells, subjects = basis.frame, basis.bootstrap, basis.cells, basis.subjects
    tables = {
        task: conversation_table(frame, bootstrap, cells[task, s.variant], subjects)
        for task, s in headlines.items()
    }
    clusters = {task: int((table.counts > 0).any(axis=1).sum()) for task, table in tables.items()}
    too_few = {
        task: basis.minimum.reason(n, " with scored items") if subjects else None
        for task, n in clusters.items()
    }
    reliability: dict[str, SplitHalf] = {
        task: split_half(table, bootstrap, basis.streams.reliability)
        for task, table in tables.items()
    }
    correlation = rank_correlation(
        headlines,
        frame.models,
        subjects,
        reliability,
        permutations=basis.options.permutations,
        rng=basis.streams.ranks,
        confidence=basis.options.confidence,
        too_few=too_few,
        hint="" if subjects else no_subjects(basis.roster),
        clusters=clusters,
    )
    entries, drawn = [], {}
    for task, scores in sorted(headlines.items()):
        entry, samples = task_discriminability(
            scores, tables[task], frame.models, subjects, bootstrap, too_few[task]
        )
        entries.append(entry)
        drawn[task] = samples
    report = DiscriminabilityReport(
        tasks=ranked(entries), ratios=ratios(entries, drawn, basis.options.confidence, too_few)
    )
    return Claims(correlation, report)


def _basis(runs: Runs, options: Options) -> Basis:
    frame = runs.frame
    streams = Streams.of(options.seed)
    clusters = cluster_codes(frame, runs, options.cluster)
    bootstrap = ClusterBootstrap.create(
        clusters, options.resamples, streams.bootstrap, options.confidence
    )
    roster = Roster.of(runs, options.include_simulated)
    minimum = Minimum(options.min_conversations, options.cluster, bootstrap.cluster_of)
    subjects = [m for m, name in enumerate(frame.models) if roster.is_subject(name)]
    cells: Cells = {
        (task, variant): build_cell(
            frame, task, variant, options.all_items, subjects, runs.made_with(task)
        )
        for task in frame.tasks
        for variant in frame.task_variants(task)
    }
    headline_of = {
        task: variant
        for task in frame.tasks
        if not audits_judges(task)
        and (variant := headline_variant(frame.task_variants(task))) is not None
    }
    return Basis(
        runs, options, frame, bootstrap, streams, roster, minimum, subjects, cells, headline_of
    )


def _scores(basis: Basis) -> tuple[list[MetricScores], dict[str, MetricScores]]:
    """Every metric of every task but the judges' audits, and each task's headline among them."""
    scores: list[MetricScores] = []
    for (task, _), cell in sorted(basis.cells.items()):
        if not audits_judges(task):
            scores += metric_scores(basis.frame, basis.bootstrap, cell)
    headlines = {
        s.task: s
        for s in scores
        if basis.headline_of.get(s.task) == s.variant
        and s.metric == headline_metric(basis.cells[s.task, s.variant])
    }
    return scores, headlines


def _provenance(
    basis: Basis, rows: list[ScoreRow], tasks: list[TaskInfo], agreement: list[JudgeAgreement]
) -> Provenance:
    runs = basis.runs
    judges = sorted({a.judge for a in agreement} | {j for info in tasks for j in info.judges})
    named = sorted({r.model for r in rows if r.model_kind != "reference"})
    recorded = {str(run.path): run.recorded for run in runs.runs}
    return provenance(runs, basis.roster, named, judges, recorded)


def _leading_notices(basis: Basis, made: Provenance) -> list[Notice]:
    """The notices that head the list, most serious first: an incomplete run, no scored item,
    too few conversations in the whole run (else in each cell)."""
    frame = basis.frame
    lead = []
    if made.status != "complete":
        lead.append(Notice(kind="incomplete_run", message=made.status))
    if not frame.answered.any():
        lead.append(Notice(kind="no_scored_items", message=no_scored_items(frame)))
    too_few = basis.minimum.reason(basis.bootstrap.n_clusters)  # the whole run
    if too_few is not None:
        lead.append(Notice(kind="too_few_conversations", message=too_few))
    else:
        lead += cell_notices(frame, basis.cells, basis.minimum)
    return lead


def _differences(basis: Basis) -> list[ModelDifference]:
    """The asked pairs' paired headline differences, on each task's headline cell."""
    options = basis.options
    cells = {task: basis.cells[task, variant] for task, variant in basis.headline_of.items()}
    subjects = [basis.frame.models[m] for m in basis.subjects]
    resampling = Resampling(options.seed, options.resamples, options.confidence, basis.minimum)
    return model_differences(basis.frame, cells, subjects, options.differences, resampling)


def _settings(options: Options) -> Settings:
    return Settings(
        seed=options.seed,
        resamples=options.resamples,
        corpus_resamples=min(options.corpus_resamples, options.resamples),
        permutations=options.permutations,
        cluster=options.cluster,
        confidence=options.confidence,
        min_subgroup_conversations=options.min_subgroup_conversations,
        min_conversations=options.min_conversations,
        all_items=options.all_items,
        include_simulated=options.include_simulated,
    )


def _build(runs: Runs, options: Options) -> Summary:
    if not runs.records:
        raise ValueError(f"no records yet in {', '.join(str(r.path) for r in runs.runs)}")
    basis = _basis(runs, options)
    frame, bootstrap, cells, minimum = basis.frame, basis.bootstrap, basis.cells, basis.minimum
    roster, headline_of = basis.roster, basis.headline_of
    tasks = [task_info(frame, runs, task, cells) for task in sorted(headline_of)]
    scores, headlines = _scores(basis)
    rows = score_rows(frame, scores, cells, roster, headline_of, minimum)
    consistency, shares = ceilings(frame, cells, headlines, runs.conversations, bootstrap, minimum)
    train, train_notices = train_split(runs, options.train, frame.conversations)
    rows += reference_rows(frame, bootstrap, cells, headline_of, minimum, train, options.seed)
    found = claims(basis, headlines)
    details, detail_notices = diagnostics(basis)
    agreement = judge_agreement(frame, bootstrap, roster, cells, minimum)
    verdicts = verdict_table(frame, audits_judges)
    biases = judge_bias(verdicts, roster.entries, bootstrap, minimum)
    corrected = response_corrected(frame, verdicts, bootstrap, minimum)
    made = _provenance(basis, rows, tasks, agreement)
    notices = [*runs.notices, *train_notices, *record_notices(rows), *left_out_notices(cells)]
    notices += part_notices(frame, cells)
    notices += detail_notices
    notices += twins_alone(frame, headline_of, audits_judges)
    notices += judge_notices(biases, corrected, next(iter(verdicts.judged_tasks), ""))
    return Summary(
        provenance=made,
        settings=_settings(options),
        tasks=tasks,
        scores=rows,
        rank_correlation=found.rank_correlation,
        discriminability=found.discriminability,
        leads=leads(headlines, rows, frame.models, roster, options.confidence),
        context_modes=context_differences(
            frame, bootstrap, lambda name: roster.kind(name) in ("model", "simulated"), minimum
        ),
        person_gap=person_gaps(frame, bootstrap, cells, headline_of, roster, minimum),
        differences=_differences(basis),
        judge_agreement=agreement,
        judge_panel=judge_panel(verdicts, bootstrap, minimum),
        judge_bias=biases,
        response_corrected=corrected,
        diagnostics=details,
        left_out_items=[item for cell in cells.values() for item in cell.left_out],
        self_consistency=consistency,
        share_of_ceiling=shares,
        warnings=[*_leading_notices(basis, made), *notices],
        rollouts=rollouts(runs, bootstrap, frame.conversations, headline_of),
    )


def no_scored_items(frame: Frame) -> str:
    reasons = Counter((r.error or "failed").split("; ")[0][:200] for r in frame.records)
    listed = "; ".join(f"{count}x {reason}" for reason, count in reasons.most_common(3))
    return f"no scored items: every recorded item failed ({listed})"


def summary_json(summary: Summary) -> str:
    """The summary as JSON; refuses NaN and infinities (they must be null with a reason)."""
    return json.dumps(summary.model_dump(mode="json"), indent=2, allow_nan=False) + "\n"
