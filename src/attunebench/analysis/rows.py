"""Score rows, task descriptions and record warnings: the tables of summary.json."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from attunebench.analysis.frame import Frame, headline_variant
from attunebench.analysis.metrics import HEADLINE
from attunebench.analysis.provenance import Roster
from attunebench.analysis.schema import Notice, ScoreRow, TaskInfo
from attunebench.analysis.scores import MetricScores, counts

CellKey = tuple[str, str, str]  # task, variant, model


@dataclass(frozen=True)
class RecordMeta:
    """What the records' `meta` says, gathered in one pass (items counted once each)."""

    judges: Mapping[CellKey, list[str]]  # the judges behind each (task, variant, model)
    gold_levels: Mapping[str, Mapping[str, int]]  # task -> gold level -> items
    derived: Mapping[str, tuple[int, int]]  # task -> (derived items, items that say)

    @classmethod
    def scan(cls, frame: Frame) -> RecordMeta:
        judges: dict[CellKey, set[str]] = defaultdict(set)
        levels: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
        derived: dict[str, dict[int, bool]] = defaultdict(dict)
        for i, record in enumerate(frame.records):
            meta = record.meta
            if not meta:
                continue
            if meta.get("judges"):
                judges[record.task, record.variant, record.model].update(map(str, meta["judges"]))
            if "gold_level" in meta:
                levels[record.task][str(meta["gold_level"])].add(int(frame.item[i]))
            if "derived" in meta:
                derived[record.task][int(frame.item[i])] = bool(meta["derived"])
        return cls(
            {key: sorted(specs) for key, specs in judges.items()},
            {task: {lv: len(items) for lv, items in by.items()} for task, by in levels.items()},
            {task: (sum(flags.values()), len(flags)) for task, flags in derived.items()},
        )  # fmt: skip

    def task_judges(self, task: str) -> list[str]:
        return sorted({j for (t, _, _), specs in self.judges.items() if t == task for j in specs})


def task_infos(frame: Frame, meta: RecordMeta, skip: str) -> list[TaskInfo]:
    """What each task is made of: variants, items, gold levels, derived pairs, judges."""
    out = []
    for code, task in enumerate(frame.tasks):
        if task == skip:
            continue
        variants = frame.task_variants(task)
        derived, saying = meta.derived.get(task, (0, 0))
        out.append(TaskInfo(
            name=task, headline_variant=headline_variant(variants), variants=variants,
            n_items=int(np.unique(frame.item[frame.task == code]).size),
            gold_levels=dict(sorted(meta.gold_levels.get(task, {}).items())),
            derived_share=derived / saying if saying else None, judges=meta.task_judges(task),
        ))  # fmt: skip
    return out


def _metric_judges(metric: str, judges: list[str]) -> list[str]:
    """A per-judge metric `name[judge]` comes from that judge; others from all of the item's."""
    if metric.endswith("]") and "[" in metric:
        return [metric[metric.index("[") + 1 : -1]]
    return judges


def _clean(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def score_rows(
    frame: Frame, metric_scores: list[MetricScores], meta: RecordMeta,
    roster: Roster, headline_of: Mapping[str, str],
) -> list[ScoreRow]:  # fmt: skip
    rows = []
    tallies = {key: counts(frame, *key) for key in {(s.task, s.variant) for s in metric_scores}}
    for scores in metric_scores:
        is_headline = scores.metric == HEADLINE and headline_of[scores.task] == scores.variant
        for model, count in sorted(tallies[scores.task, scores.variant].items()):
            m = frame.models.index(model)
            value = _clean(scores.point[m])
            why = None if value is not None else (
                "no scored items" if count.n == 0 else "undefined on these items")  # fmt: skip
            judges = meta.judges.get((scores.task, scores.variant, model), [])
            rows.append(ScoreRow(
                model=model, model_kind=roster.kind(model),
                task=scores.task, variant=scores.variant, metric=scores.metric,
                headline=is_headline, value=value, ci_low=_clean(scores.low[m]),
                ci_high=_clean(scores.high[m]), reason=why, n=count.n,
                n_conversations=count.n_conversations, n_invalid=count.n_invalid,
                n_failed=count.n_failed, judges=_metric_judges(scores.metric, judges),
            ))  # fmt: skip
    return rows


def record_notices(rows: list[ScoreRow]) -> list[Notice]:
    """Failed and invalid records per (task, model), and which models are not LLMs."""
    kinds = sorted({(r.model, r.model_kind) for r in rows if r.model_kind != "model"})
    out = [
        Notice(kind=f"{kind}_model", model=model,
               message=f"{model} is a {kind}, not a language model under test")
        for model, kind in kinds
    ]  # fmt: skip
    for row in rows:
        if row.headline and row.n_failed:
            out.append(Notice(kind="failed_records", task=row.task, model=row.model, message=(
                f"{row.n_failed} items failed (no answer could be had) and are not scored")))
        if row.headline and row.n_invalid:
            out.append(Notice(kind="invalid_records", task=row.task, model=row.model, message=(
                f"{row.n_invalid} of {row.n} answers could not be parsed; they score 0")))
    return out


def uneven_items(frame: Frame, tasks: list[TaskInfo]) -> list[Notice]:
    """Tasks whose models were scored on different items (failures, merged partial runs):
    their scores, ranks and intervals then rest on different evidence."""
    out = []
    for info in tasks:
        mask = frame.cell(info.name, info.headline_variant) & frame.scored
        items = {m: set(frame.item[mask & (frame.model == m)].tolist())
                 for m in np.unique(frame.model[mask])}  # fmt: skip
        every = set().union(*items.values()) if items else set()
        short = sorted(frame.models[m] for m, own in items.items() if own != every)
        if short:
            out.append(Notice(kind="uneven_items", task=info.name, message=(
                f"models were scored on different items ({len(every)} in all; fewer for "
                f"{', '.join(short)}): compare their scores with care")))  # fmt: skip
    return out
