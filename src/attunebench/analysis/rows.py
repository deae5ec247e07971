"""Score rows, task descriptions and record warnings: the tables of summary.json."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from itertools import repeat

import numpy as np

from attunebench.analysis.bootstrap import Minimum
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import Frame, IntArray, headline_variant, present
from attunebench.analysis.loading import Runs
from attunebench.analysis.provenance import Roster, task_provenance
from attunebench.analysis.schema import Estimate, Notice, ScoreRow, TaskInfo
from attunebench.analysis.scores import MetricScores, counts, headline_metric

CellKey = tuple[str, str]  # task, variant


def item_golds(frame: Frame, cell: Cell) -> tuple[IntArray, list[str], list[bool]]:
    """The conversation (a code), gold level and whether derived of each item of the cell,
    read from the records' gold without typed views (missing fields take the gold type's
    defaults, as a view's do); each read by one C-level map over the items."""
    if cell.declaration is None:
        return np.zeros(0, dtype=np.int64), [], []
    fields = cell.declaration.gold_type.model_fields
    default_level, default_derived = fields["level"].default, fields["derived"].default
    rows = np.flatnonzero(cell.mask)
    _, last = np.unique(frame.item[rows][::-1], return_index=True)  # an item's last record
    chosen = rows[len(rows) - 1 - last]
    golds = [found or {} for found in map(frame.golds.__getitem__, frame.gold[chosen].tolist())]
    levels = list(map(str, map(dict.get, golds, repeat("level"), repeat(default_level))))
    derived = list(map(bool, map(dict.get, golds, repeat("derived"), repeat(default_derived))))
    return frame.conversation[chosen], levels, derived


def task_info(frame: Frame, runs: Runs, task: str, cells: Mapping[CellKey, Cell]) -> TaskInfo:
    """What a task is made of: variants, items, gold levels and provenance, judges."""
    variants = frame.task_variants(task)
    headline = headline_variant(variants)
    if headline is None:
        raise ValueError(f"task {task} has only person-hidden twins: no headline to describe")
    cell = cells[task, headline]
    conversations, held, derived = item_golds(frame, cell)
    levels = Counter(held)
    judges = sorted({j for js in cell.judges.values() for j in js})
    derived_label = ["derived"] if any(derived) else []
    declaration = cell.declaration
    # Derived gold (pairs ordered from ratings) is `derived` whoever gave the ratings: the
    # person never compared the two replies. Read once per conversation of the others.
    given = present(conversations[~np.array(derived, dtype=bool)], len(frame.conversations))
    named = (frame.conversations[code] for code in given)
    task_sources = {runs.conversations[c].source.name for c in named if c in runs.conversations}
    left_out: dict[str, int] = {}
    for run in runs.runs:
        for reason, count in run.info.left_out.get(task, {}).items():
            left_out[reason] = left_out.get(reason, 0) + count
    return TaskInfo(
        name=task,
        headline=declaration.scoring.headline if declaration else "mean score",
        provenance=sorted(
            {*task_provenance(runs, task_sources, declaration.gold_fields), *derived_label}
        )
        if declaration
        else [],
        headline_variant=headline,
        variants=variants,
        n_items=len(present(frame.item[frame.task == frame.tasks.index(task)], 1)),
        gold_levels=dict(sorted(levels.items()))
        if len(levels) > 1 or "conversation" in levels
        else {},
        derived_share=sum(derived) / len(derived) if any(derived) else None,
        judges=judges,
        left_out_items=cell.left_out_count,
        left_out=left_out,
    )


def _metric_judges(metric: str, judges: list[str]) -> list[str]:
    """A per-judge metric `name[judge]` comes from that judge; others from all of the item's."""
    if metric.endswith("]") and "[" in metric:
        return [metric[metric.index("[") + 1 : -1]]
    return judges


def score_rows(
    frame: Frame,
    metric_scores: list[MetricScores],
    cells: Mapping[CellKey, Cell],
    roster: Roster,
    headline_of: Mapping[str, str],
    minimum: Minimum,
) -> list[ScoreRow]:
    """Every metric's row per model; a model's intervals need `minimum` clusters among the
    conversations of its scored items in the cell."""
    rows = []
    tallies = {
        key: counts(frame, cells[key]) for key in {(s.task, s.variant) for s in metric_scores}
    }
    judges_of = {key: cells[key].judges for key in tallies}
    too_few = {
        (key, m): minimum.of(frame.conversation[cells[key].rows(frame, m)])
        for key in tallies
        for m in range(len(frame.models))
    }
    for scores in metric_scores:
        key = (scores.task, scores.variant)
        is_headline = (
            scores.metric == headline_metric(cells[key])
            and headline_of.get(scores.task) == scores.variant
        )
        for model, count in sorted(tallies[key].items()):
            m = frame.models.index(model)
            point = scores.point[m]
            why = (
                None
                if not np.isnan(point)
                else ("no scored items" if count.n == 0 else "undefined on these items")
            )
            estimate = Estimate.of(point, scores.low[m], scores.high[m], why, few=too_few[key, m])
            rows.append(
                ScoreRow(
                    **estimate.model_dump(),
                    model=model,
                    model_kind=roster.kind(model),
                    task=scores.task,
                    variant=scores.variant,
                    metric=scores.metric,
                    headline=is_headline,
                    n=count.n,
                    n_conversations=count.n_conversations,
                    n_invalid=count.n_invalid,
                    n_failed=count.n_failed,
                    n_judge_failed=count.n_judge_failed,
                    judges=_metric_judges(scores.metric, judges_of[key].get(model, [])),
                    subject=roster.is_subject(model),
                )
            )
    return rows


def record_notices(rows: list[ScoreRow]) -> list[Notice]:
    """Failed and invalid records per (task, model), and which models are not under test."""
    kinds = sorted({(r.model, r.model_kind) for r in rows if not r.subject})
    out = [
        Notice(
            kind=f"{kind}_model",
            model=model,
            message=f"{model} is a {kind}, not a language model under test",
        )
        for model, kind in kinds
    ]
    for row in (r for r in rows if r.headline):
        counted = (
            (
                "failed_records",
                row.n_failed,
                "items failed (no answer could be had) and are not scored",
            ),
            (
                "judge_failed",
                row.n_judge_failed,
                f"of {row.n} items had a judge call fail for good; "
                "each lost verdict is scored as a loss for the model",
            ),
            (
                "invalid_records",
                row.n_invalid,
                f"of {row.n} answers could not be used; they score the worst value",
            ),
        )
        out.extend(
            Notice(kind=kind, task=row.task, model=row.model, message=f"{count} {what}")
            for kind, count, what in counted
            if count
        )
    return out


def part_notices(frame: Frame, cells: Mapping[CellKey, Cell]) -> list[Notice]:
    """Per task whose items come from several corpus parts (their gold's `part`): one line
    saying that its headline is read within each part and pooled, and that its references
    (`reference/constant` first) are fitted within each part."""
    out = []
    for task in frame.tasks:
        headline = headline_variant(frame.task_variants(task))
        cell = cells.get((task, headline)) if headline is not None else None
        if cell is None:
            continue
        parts = [frame.parts[code] for code in np.unique(frame.part[cell.mask]).tolist()]
        if len(parts) < 2:
            continue
        out.append(Notice(kind="corpus_parts", task=task, message=_parts_said(cell, parts)))
    return out


def _parts_said(cell: Cell, parts: list[str]) -> str:
    """What reading a task's headline within corpus parts means for its numbers, in words."""
    headline = headline_metric(cell)
    said = (
        f"{cell.task}: items from {len(parts)} corpus parts ({', '.join(parts)}): the headline "
        f"({headline}) is read within each part and pooled, the parts weighted by their items "
        "(docs/tasks.md, corpus parts)"
    )
    declaration = cell.declaration
    if declaration is not None and "reference/constant" in declaration.scoring.references():
        said += (
            "; reference/constant is a constant per part (each part's train median or majority "
            "label), so knowing the corpus earns nothing beyond it"
        )
    names = {metric.name for metric in declaration.scoring.metrics} if declaration else set()
    if f"pooled_{headline}" in names:
        said += f"; the figure with the parts pooled is pooled_{headline}, never the headline"
    return said


def left_out_notices(cells: Mapping[CellKey, Cell]) -> list[Notice]:
    """Items left out for want of an answer from every model under test, yardsticks that lack
    some of them, or items that differ."""
    out: list[Notice] = []
    for (task, variant), cell in sorted(cells.items()):
        said: list[tuple[str, str | None, str]] = []  # kind, model, message
        if cell.left_out_count:
            said.append(
                (
                    "common_items",
                    None,
                    f"{cell.left_out_count} items not answered by every model are left out of "
                    "every model's numbers (listed under left_out_items)",
                )
            )
        said.extend(
            (
                "yardstick_items",
                model,
                f"{model} (not under test) has no answer for {count} of the {cell.common} "
                f"items the models under test share; its numbers are on the "
                f"{cell.common - count} it has",
            )
            for model, count in sorted(cell.lacking.items())
        )
        if cell.items_differ:
            said.append(
                (
                    "uneven_items",
                    None,
                    "models were scored on different items (--all-items): compare their "
                    "scores with care",
                )
            )
        out.extend(
            Notice(kind=kind, task=task, model=model, message=f"{variant}: {message}")
            for kind, model, message in said
        )
    return out
