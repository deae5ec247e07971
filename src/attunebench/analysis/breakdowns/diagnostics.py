"""Where models fail: confusion matrices, per-label F1, turn position, intensity, worst items.

Turn position (thirds of the conversation) and intensity (the user's 1-5 self-report at that
turn) bin a task's headline items; each model's mean score per bin gets an interval.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import is_not, itemgetter

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import STATUS_CODES, FloatArray, Frame, IntArray
from attunebench.analysis.schema import (
    CalibrationBin,
    CalibrationCurve,
    Confusion,
    GroupScore,
    ItemAnswer,
    LabelF1,
    WorstItem,
    item_address,
)
from attunebench.data.schema import Conversation
from attunebench.records import ItemRecord
from attunebench.stats import group_sums, none_if_nan
from attunebench.tasks.base import Scoring
from attunebench.tasks.helpers.calibration import bins, choice_rows, is_reading, reading_bins
from attunebench.tasks.helpers.metrics import label_counts, per_label

POSITIONS = ("early", "middle", "late")
INTENSITIES = ("low (1-2)", "medium (3)", "high (4-5)")
TEXT_LIMIT = 600


def position_bins(frame: Frame, conversations: Mapping[str, Conversation]) -> IntArray:
    """Each record's third of its conversation (0 early, 1 middle, 2 late)."""
    last = np.zeros(len(frame.conversations), dtype=np.int64)
    np.maximum.at(last, frame.conversation, frame.turn)
    for code, cid in enumerate(frame.conversations):
        if cid in conversations:
            last[code] = max(last[code], conversations[cid].turns[-1].index)
    relative = frame.turn / np.maximum(last[frame.conversation], 1)
    return np.minimum((3 * relative).astype(np.int64), 2)


def intensity_bins(frame: Frame, conversations: Mapping[str, Conversation]) -> IntArray:
    """Each record's intensity bin (-1: unknown), from the reported state at its turn."""
    last = max((t.index for c in conversations.values() for t in c.turns), default=0)
    table = np.full((len(frame.conversations), max(last, int(frame.turn.max())) + 1), np.nan)
    for code, cid in enumerate(frame.conversations):
        for turn in conversations[cid].turns if cid in conversations else ():
            if turn.state is not None and turn.state.intensity is not None:
                table[code, turn.index] = turn.state.intensity
    levels = table[frame.conversation, frame.turn]
    bins = np.where(levels < 2.5, 0, np.where(levels < 3.5, 1, 2))
    return np.where(np.isnan(levels), -1, bins)


@dataclass(frozen=True)
class ScoredItems:
    """A cell's scored records (frame indices, in its order) with each one's model,
    conversation and score: read once for every binning of them, not per binning from the
    whole frame."""

    task: str
    rows: IntArray
    model: IntArray
    conversation: IntArray
    score: FloatArray

    @classmethod
    def of(cls, frame: Frame, cell: Cell) -> ScoredItems:
        rows = np.flatnonzero(cell.mask & frame.scored)
        return cls(cell.task, rows, frame.model[rows], frame.conversation[rows], frame.score[rows])


def binned_scores(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    scored: ScoredItems,
    group: str,
    levels: Sequence[str],
    bins: IntArray,
    minimum: Minimum,
) -> list[GroupScore]:
    """Each model's mean score per bin (`bins[i]` for scored item i; -1: none), with intervals
    where the bin's items fall in `minimum` clusters or more."""
    keep = bins >= 0
    if not keep.any():
        return []
    n_levels = len(levels)
    conversation = scored.conversation[keep]
    groups = scored.model[keep] * n_levels + bins[keep]
    size = len(frame.models) * n_levels
    point, samples = bootstrap.means(scored.score[keep], conversation, groups, size)
    items = np.bincount(groups, minlength=size)
    conversations = distinct_per_group(groups, conversation, size)
    clusters = distinct_per_group(groups, minimum.cluster_of[conversation], size)
    low, high = bootstrap.interval(samples, clusters)  # expanded for each bin's own clusters
    rows = []
    for g in np.flatnonzero(items).tolist():
        too_few = minimum.reason(int(clusters[g]), " in this group")
        rows.append(
            GroupScore(
                model=frame.models[g // n_levels],
                task=scored.task,
                group=group,
                level=levels[g % n_levels],
                value=float(point[g]),
                ci_low=None if too_few else none_if_nan(low[g]),
                ci_high=None if too_few else none_if_nan(high[g]),
                reason=too_few,
                n=int(items[g]),
                n_conversations=int(conversations[g]),
            )
        )
    return rows


def distinct_per_group(groups: IntArray, codes: IntArray, size: int) -> IntArray:
    """How many distinct codes (conversations, clusters) each of `size` groups holds."""
    width = int(codes.max(initial=0)) + 1
    present = np.bincount(groups * width + codes, minlength=size * width) > 0
    counted: IntArray = present.reshape(size, width).sum(axis=1)
    return counted


LabelSets = tuple[frozenset[str], frozenset[str]]


@dataclass(frozen=True)
class Labelled:
    """The cell's items that have labels, in the cell's order: each one's record index, model
    code and (predicted, gold) labels (read once per cell: the confusion matrices and per-label
    F1 both use them). Held column by column, so that they are read back with no Python
    statement per item."""

    records: IntArray
    models: IntArray
    sets: list[LabelSets]


def label_sets(frame: Frame, cell: Cell) -> Labelled:
    """The cell's `Labelled` items (none for a task without labels)."""
    declaration = cell.declaration
    rows = np.flatnonzero(cell.mask)  # the order of the cell's views
    if declaration is None or type(declaration.scoring).label_sets is Scoring.label_sets:
        return Labelled(rows[:0], frame.model[rows[:0]], [])  # a task without labels
    read = list(map(declaration.scoring.label_sets, cell.views.values()))
    has = np.fromiter(map(is_not, read, repeat(None)), dtype=np.bool_, count=len(read))
    sets = [found for found in read if found is not None]
    return Labelled(rows[has], frame.model[rows[has]], sets)


_PREDICTED, _GOLD = itemgetter(0), itemgetter(1)


def confusion(frame: Frame, cell: Cell, found: Labelled | None = None) -> list[Confusion]:
    """Single-label tasks: gold (rows) by predicted label (columns, plus 'none' and 'invalid')."""
    found = label_sets(frame, cell) if found is None else found
    golds = list(map(_GOLD, found.sets))
    if not golds or set(map(len, golds)) != {1}:
        return []
    # each item's gold label, and its predicted one ("none" without one, "invalid" for an
    # invalid answer), read by C-level maps; every (model, gold, column) counted by one Counter
    gold_of = list(map(next, map(iter, golds)))
    column_of = list(map(next, map(iter, map(_PREDICTED, found.sets)), repeat("none")))
    for k in np.flatnonzero(frame.status[found.records] == STATUS_CODES["invalid"]).tolist():
        column_of[k] = "invalid"
    counted = Counter(zip(found.models.tolist(), gold_of, column_of, strict=True))
    per_model: dict[int, Counter[tuple[str, str]]] = defaultdict(Counter)
    for (model, gold, column), count in counted.items():
        per_model[model][gold, column] = count
    out = []
    for model, cells in sorted(per_model.items()):
        labels = sorted({g for g, _ in cells})
        columns = sorted({c for _, c in cells} - {"invalid", "none"} | set(labels))
        columns += [extra for extra in ("none", "invalid") if any(c == extra for _, c in cells)]
        table = [[cells[g, c] for c in columns] for g in labels]
        out.append(
            Confusion(
                model=frame.models[model],
                task=cell.task,
                labels=labels,
                predicted=columns,
                counts=table,
            )
        )
    return out


def label_f1(frame: Frame, cell: Cell, found: Labelled | None = None) -> list[LabelF1]:
    """Per model and label: F1, precision, recall and support (the gold count)."""
    found = label_sets(frame, cell) if found is None else found
    if not found.sets:
        return []
    labels, table = label_counts(found.sets)
    models = found.models
    sums = group_sums(models, table, len(frame.models))
    f1, precision, recall, support = per_label(sums)
    return [
        LabelF1(
            model=frame.models[m],
            task=cell.task,
            label=label,
            f1=none_if_nan(f1[m, i]),
            precision=none_if_nan(precision[m, i]),
            recall=none_if_nan(recall[m, i]),
            support=int(support[m, i]),
        )
        for m in np.unique(models)
        for i, label in enumerate(labels)
    ]


def calibration(frame: Frame, cell: Cell) -> list[CalibrationCurve]:
    """Each model's reliability diagram over the cell's choice answers (none: no curve)."""
    declaration = cell.declaration
    if (
        declaration is None
        or type(declaration.scoring).calibration_rows is Scoring.calibration_rows
    ):
        return []  # a task without choice answers
    reading = next((m.values for m in declaration.scoring.metrics if is_reading(m.values)), None)
    out = []
    for m in np.unique(frame.model[cell.mask]).tolist():
        read = cell.readings.get(m, {})
        if reading in read:  # the calibration metrics' reading of the same answers
            diagram = reading_bins(read[reading])
        else:
            rows, _ = choice_rows(cell.model_views(frame, m), declaration.scoring.calibration_rows)
            diagram = bins(rows)
        if diagram:
            found = [CalibrationBin(confidence=c, accuracy=a, n=n) for c, a, n in diagram]
            out.append(CalibrationCurve(task=cell.task, model=frame.models[m], bins=found))
    return out


def _compact(value: object) -> str:
    text = (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + "…"


def _reasoning(record: ItemRecord) -> str | None:
    notes = []
    for verdict in record.verdicts:
        parsed = verdict.parsed or {}
        reason = next(
            (parsed[k] for k in ("reason", "reasoning", "explanation") if k in parsed), None
        )
        text = str(reason) if reason is not None else verdict.raw_output
        notes.append(f"{verdict.judge} ({verdict.order or verdict.mode}): {text}")
    return _compact(" | ".join(notes)) if notes else None


def _item_text(conversation: Conversation | None, turn_index: int, item_id: str) -> str | None:
    """The user's message, and any reply the item id names (`a~b`, `turn:id`)."""
    if conversation is None:
        return None
    turns = {t.index: t for t in conversation.turns}
    if turn_index not in turns:
        return None
    parts = [f"user: {turns[turn_index].user}"]
    for key in item_id.split("~"):
        where, _, reply_id = key.rpartition(":")
        turn = turns.get(int(where)) if where.isdigit() else turns[turn_index]
        reply = turn.response(reply_id) if turn is not None else None
        if reply is not None:
            parts.append(f"reply {key}: {reply.text}")
    return _compact("\n".join(parts))


def _means(values: FloatArray, codes: IntArray) -> tuple[IntArray, FloatArray]:
    """The codes present, in order, and the mean of each one's values (summed by one
    `np.bincount` over the codes themselves, in the values' order: no sort to number them)."""
    counts = np.bincount(codes)
    items = np.flatnonzero(counts)
    return items, np.bincount(codes, values)[items] / counts[items]


def worst_items(
    frame: Frame, cell: Cell, conversations: Mapping[str, Conversation], limit: int = 5
) -> list[WorstItem]:
    """The items with the lowest mean score over models, with every model's answer."""
    task, variant = cell.task, cell.variant
    rows = np.flatnonzero(cell.mask & frame.scored)
    if not rows.size:
        return []
    item_of = frame.item[rows]
    items, means = _means(frame.score[rows], item_of)
    order = np.lexsort((items, means))[:limit]  # lowest mean first; ties by first appearance
    out = []
    for position in order:
        held = rows[item_of == items[position]].tolist()
        records = sorted(map(frame.records.__getitem__, held), key=lambda r: r.model)
        first = records[0]
        answers = [
            ItemAnswer(
                model=r.model,
                status=r.status,
                score=r.score,
                prediction=_compact(r.raw_output if r.status == "invalid" else r.prediction),
                reasoning=_reasoning(r),
            )
            for r in records
        ]
        out.append(
            WorstItem(
                **item_address(task, variant, first),
                mean_score=float(means[position]),
                text=_item_text(
                    conversations.get(first.conversation_id), first.turn_index, first.item_id
                ),
                gold=_compact(first.gold),
                answers=answers,
            )
        )
    return out
