"""A columnar view of merged records: integer codes for task, model, variant and conversation.

Every statistic in the analysis is computed from these columns with numpy, so records are
walked once. Scoring conventions (shared with the task modules):

- `ok` and `invalid` records with a `score` are scored. The task gives an `invalid` record 0.0
  wherever the item has gold (an unparseable answer counts against the model) and no score
  where the item has no gold for the primary score (an emotion turn with only numbers).
- `failed` records (no answer could be had) are never scored; they are counted and reported.
- A record flagged `judge-failed` (a judge call failed for good) is scored, the lost verdict a
  loss for the model judged; `judge_failed` marks it so that it is counted and shown.
"""

from __future__ import annotations

import marshal
import math
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import attrgetter, eq, itemgetter, ne
from typing import Any

import numpy as np
import numpy.typing as npt

from attunebench.records import JUDGE_FAILED, ItemRecord
from attunebench.tasks.helpers.twins import is_person_hidden

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

STATUS_CODES = {"ok": 0, "invalid": 1, "failed": 2}
_FIELDS = (
    "task",
    "model",
    "variant",
    "conversation_id",
    "turn_index",
    "item_id",
    "status",
    "score",
    "flags",
    "scores",
    "gold",
    "prediction",
)
# marshal's format 2 writes a value the same whoever else holds its parts (later formats write
# a part held elsewhere as a reference: equal values would differ)
_MARSHAL = 2


def _codes(values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    """Sorted distinct values, and each value's position among them."""
    names = tuple(sorted(set(values)))
    index = {name: position for position, name in enumerate(names)}
    return names, np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))


def _distinct(values: Sequence[Any]) -> tuple[tuple[Any, ...], IntArray]:
    """Distinct JSON values (the same serialisation: `marshal`, the cheapest that tells 1 from
    1.0 and writes floats exactly; `pickle` where one holds what `marshal` cannot write) in
    order of first appearance, and each value's position among them."""
    try:
        keys = list(map(marshal.dumps, values, repeat(_MARSHAL)))
    except ValueError:
        keys = [_key(value) for value in values]
    first = dict(zip(keys, values, strict=True))
    index = dict(zip(first, range(len(first)), strict=True))
    codes = np.fromiter(map(index.__getitem__, keys), dtype=np.int64, count=len(keys))
    return tuple(first.values()), codes


def _item_golds(golds: Sequence[Any], item: IntArray) -> tuple[tuple[Any, ...], IntArray]:
    """As `_distinct`, for golds: every record of an item holds the same gold, so each item's
    first record's gold is one, and only a record whose gold differs from it (a merged older
    run's) is read apart (one per distinct serialisation)."""
    _, first, inverse = np.unique(item, return_index=True, return_inverse=True)
    firsts = list(map(golds.__getitem__, first.tolist()))
    code = inverse.reshape(-1).astype(np.int64)
    apart: dict[bytes, tuple[int, Any]] = {}
    for i in compress(range(len(golds)), map(ne, golds, map(firsts.__getitem__, code.tolist()))):
        code[i] = apart.setdefault(_key(golds[i]), (len(firsts) + len(apart), golds[i]))[0]
    return (*firsts, *(gold for _, gold in apart.values())), code


def _key(value: Any) -> bytes:
    """Bytes equal for equal JSON values (and never for unequal ones)."""
    try:
        return marshal.dumps(value, _MARSHAL)
    except ValueError:
        return pickle.dumps(value, pickle.HIGHEST_PROTOCOL)


def _score_columns(
    score_maps: Sequence[Mapping[str, float | None]], task: IntArray
) -> dict[str, FloatArray]:
    """Each key of the records' `scores` as a column, NaN where a record lacks it or holds
    None. A task's records hold a few keys: each is read from the task's records by one
    C-level map (a statement per record and key cost a quarter of the frame)."""
    columns: dict[str, FloatArray] = {}
    for code in np.unique(task).tolist():
        rows = np.flatnonzero(task == code)
        held = list(map(score_maps.__getitem__, rows.tolist()))
        for key in dict.fromkeys(chain.from_iterable(held)):
            found = list(map(dict.get, held, repeat(key)))  # type: ignore[arg-type]
            column = columns.setdefault(key, np.full(len(score_maps), np.nan))
            column[rows] = np.array(found, dtype=np.float64)  # None (or absent): NaN
    return columns


def _flag_codes(flags: Sequence[Sequence[str]]) -> tuple[tuple[tuple[str, ...], ...], IntArray]:
    """The distinct flag tuples in order of first appearance, and each record's among them."""
    try:
        distinct = dict.fromkeys(flags)
    except TypeError:  # a record constructed unvalidated may hold a list
        flags = list(map(_flag_tuple, flags))
        distinct = dict.fromkeys(flags)
    index = {found: code for code, found in enumerate(distinct)}
    codes = np.fromiter(map(index.__getitem__, flags), dtype=np.int64, count=len(flags))
    return tuple(map(_flag_tuple, index)), codes


def _flag_tuple(found: Sequence[str] | None) -> tuple[str, ...]:
    """One record's flags as a tuple; unvalidated, it may hold None (no flags) or one bare flag."""
    if found is None:
        return ()
    if isinstance(found, str):
        return (found,)
    return tuple(found)


_JUDGE, _MODE = attrgetter("judge"), attrgetter("mode")


def _verdict_columns(
    held: Sequence[Sequence[Any]], judged: BoolArray
) -> tuple[tuple[str, ...], IntArray, IntArray, BoolArray]:
    """The judges named (sorted), each verdict's record and judge code, and whether each
    record holds a pairwise verdict: one walk over the verdicts of the records with any."""
    rows = np.flatnonzero(judged)
    owned = list(map(held.__getitem__, rows.tolist()))
    verdicts = list(chain.from_iterable(owned))
    judges, judge = _codes(list(map(_JUDGE, verdicts)))
    record = np.repeat(rows, np.fromiter(map(len, owned), dtype=np.int64, count=len(owned)))
    modes = map(eq, map(_MODE, verdicts), repeat("pairwise"))
    pairwise = np.zeros(len(held), dtype=bool)
    pairwise[record[np.fromiter(modes, dtype=bool, count=len(verdicts))]] = True
    return judges, record.astype(np.int64), judge, pairwise


def _first_seen(*columns: IntArray) -> IntArray:
    """One code per distinct row of these integer columns, in order of first appearance (as
    a dict of the rows' tuples numbers them), found by sorting one integer key per row."""
    spans = [int(c.max(initial=0)) - int(c.min(initial=0)) + 1 for c in columns]
    if math.prod(spans) >= 2**62:  # no room for one key: sort the rows themselves
        rows = np.stack(columns, axis=1)
        distinct, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    else:
        key = np.zeros(len(columns[0]), dtype=np.int64)
        for column, span in zip(columns, spans, strict=True):
            key = key * span + (column - int(column.min(initial=0)))
        distinct, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(len(distinct), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(distinct))
    found: IntArray = rank[inverse.reshape(-1)]
    return found


def present(codes: IntArray, size: int) -> list[int]:
    """The distinct codes among `codes` (each below `size`), sorted: `np.unique`'s, counted
    rather than sorted (a summary asks for a task's variants a score of times)."""
    found: list[int] = np.flatnonzero(np.bincount(codes, minlength=size)).tolist()
    return found


def headline_variant(variants: Sequence[str]) -> str | None:
    """The variant a task's headline number uses: the plain one, else `blind`, else the first;
    never a person-hidden twin's (None when the task has only twins: no headline)."""
    shown = [variant for variant in variants if not is_person_hidden(variant)]
    for preferred in ("", "blind"):
        if preferred in shown:
            return preferred
    return min(shown, default=None)


@dataclass(frozen=True)
class Frame:
    records: tuple[ItemRecord, ...]
    tasks: tuple[str, ...]
    models: tuple[str, ...]
    variants: tuple[str, ...]
    conversations: tuple[str, ...]
    task: IntArray
    model: IntArray
    variant: IntArray
    conversation: IntArray
    turn: IntArray
    item: IntArray  # one code per (conversation, turn, item id): the same item across models
    status: IntArray
    score: FloatArray
    judge_failed: BoolArray  # scored with a verdict lost to a judge failure (a loss)
    # Each record's flags, a code into the distinct ones (most records carry none), so that a
    # metric reading a flag reads no record.
    flag_sets: tuple[tuple[str, ...], ...]
    flag: IntArray
    judged: BoolArray  # holds a judge's verdict (most records hold none: they are passed over)
    # The judges of every verdict: each verdict's record and judge (a code among `judges`),
    # and whether a record holds a pairwise verdict. Read with the other columns: the cells'
    # judges and the verdict table would otherwise each walk every verdict again.
    judges: tuple[str, ...]
    verdict_record: IntArray
    verdict_judge: IntArray
    pairwise: BoolArray
    # The records' golds and predictions as read (JSON values): each item's gold and each
    # distinct prediction once, and each record's among them, so that a cell reads each into
    # its typed model once (`cells.typed_views`).
    golds: tuple[dict[str, Any] | None, ...]
    gold: IntArray
    predictions: tuple[dict[str, Any] | None, ...]
    prediction: IntArray
    parts: tuple[str, ...]  # the corpus parts the records' gold names ("None" where none)
    part: IntArray

    scores: Mapping[str, FloatArray]  # each key of the records' `scores`, NaN where absent

    @classmethod
    def from_records(cls, records: Sequence[ItemRecord]) -> Frame:
        records = tuple(records)
        size = len(records)
        # Each column pulled by one `map` over the records' field dicts, without a Python
        # statement per record (transposing per-record tuples cost as much again as reading
        # them; a dict lookup costs half a model's attribute read).
        fields = list(map(vars, records))
        columns = [list(map(itemgetter(name), fields)) for name in _FIELDS]
        task_names, model_names, variant_names, conversation_ids, turns = columns[:5]
        item_ids, statuses, numbers, flags, score_maps, gold_maps, prediction_maps = columns[5:]
        flag_sets, flag = _flag_codes(flags)
        judge_failed = np.array([JUDGE_FAILED in f for f in flag_sets], dtype=bool)[flag]
        # read with the other columns (the judges' tables and cells walk only these records)
        held = list(map(itemgetter("verdicts"), fields))
        judged = np.fromiter(map(bool, held), dtype=bool, count=size)
        verdicts = _verdict_columns(held, judged)
        status = np.fromiter(map(STATUS_CODES.__getitem__, statuses), dtype=np.int64, count=size)
        score = np.array(numbers, dtype=np.float64).reshape(size)  # None: NaN
        score[status == STATUS_CODES["failed"]] = np.nan
        turn = np.array(turns, dtype=np.int64).reshape(size)
        tasks, task = _codes(task_names)
        models, model = _codes(model_names)
        variants, variant = _codes(variant_names)
        conversations, conversation = _codes(conversation_ids)
        item = _first_seen(conversation, turn, _codes(item_ids)[1])
        golds, gold = _item_golds(gold_maps, _first_seen(task, item))
        predictions, prediction = _distinct(prediction_maps)
        parts, part_of_gold = _codes([str(g.get("part")) if g else "None" for g in golds])
        return cls(
            records,
            tasks,
            models,
            variants,
            conversations,
            task,
            model,
            variant,
            conversation,
            turn,
            item,
            status,
            score,
            judge_failed,
            flag_sets,
            flag,
            judged,
            *verdicts,
            golds,
            gold,
            predictions,
            prediction,
            parts,
            part_of_gold[gold],
            _score_columns(score_maps, task),
        )

    @property
    def scored(self) -> BoolArray:
        """ok or invalid, with a score."""
        mask: BoolArray = self.answered & ~np.isnan(self.score)
        return mask

    @property
    def answered(self) -> BoolArray:
        """ok or invalid: an answer was had (an invalid one scores the worst value)."""
        mask: BoolArray = self.status != STATUS_CODES["failed"]
        return mask

    def cell(self, task: str, variant: str) -> BoolArray:
        """All records (any status) of one task and variant."""
        if task not in self.tasks or variant not in self.variants:
            return np.zeros(len(self.records), dtype=bool)
        mask: BoolArray = (self.task == self.tasks.index(task)) & (
            self.variant == self.variants.index(variant)
        )
        return mask

    def task_variants(self, task: str) -> list[str]:
        """The task's variants, in the codes' (sorted) order."""
        mask = self.task == self.tasks.index(task)
        return [self.variants[v] for v in present(self.variant[mask], len(self.variants))]

    def task_models(self, task: str, variant: str) -> list[str]:
        mask = self.cell(task, variant) & self.scored
        return [self.models[m] for m in present(self.model[mask], len(self.models))]

    def records_at(self, mask: BoolArray) -> list[ItemRecord]:
        return list(map(self.records.__getitem__, np.flatnonzero(mask).tolist()))
