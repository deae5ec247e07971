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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attunebench.records import JUDGE_FAILED, ItemRecord

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

STATUS_CODES = {"ok": 0, "invalid": 1, "failed": 2}


def _codes(values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    """Sorted distinct values, and each value's position among them."""
    names = tuple(sorted(set(values)))
    index = {name: position for position, name in enumerate(names)}
    return names, np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))


def headline_variant(variants: Sequence[str]) -> str:
    """The variant a task's headline number uses: the plain one, else `blind`, else the first."""
    for preferred in ("", "blind"):
        if preferred in variants:
            return preferred
    return sorted(variants)[0]


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

    scores: Mapping[str, FloatArray]  # each key of the records' `scores`, NaN where absent

    @classmethod
    def from_records(cls, records: Sequence[ItemRecord]) -> Frame:
        records = tuple(records)
        size = len(records)
        task_names: list[str] = []
        model_names: list[str] = []
        variant_names: list[str] = []
        conversation_ids: list[str] = []
        turns: list[int] = []
        statuses: list[str] = []
        numbers: list[float | None] = []
        judge_failed = np.zeros(size, dtype=bool)
        scores: dict[str, FloatArray] = {}
        keys: list[tuple[str, int, str]] = []
        # One pass appending to lists (setting numpy elements one at a time costs more): the
        # records are walked once.
        for i, r in enumerate(records):
            task_names.append(r.task)
            model_names.append(r.model)
            variant_names.append(r.variant)
            conversation_ids.append(r.conversation_id)
            turns.append(r.turn_index)
            keys.append((r.conversation_id, r.turn_index, r.item_id))
            statuses.append(r.status)
            numbers.append(r.score)
            if r.flags and JUDGE_FAILED in r.flags:
                judge_failed[i] = True
            for key, number in r.scores.items():
                if key not in scores:
                    scores[key] = np.full(size, np.nan)
                if number is not None:
                    scores[key][i] = number
        first = {key: code for code, key in enumerate(dict.fromkeys(keys))}
        item = np.fromiter(map(first.__getitem__, keys), dtype=np.int64, count=size)
        status = np.fromiter(map(STATUS_CODES.__getitem__, statuses), dtype=np.int64, count=size)
        score = np.array(numbers, dtype=np.float64).reshape(size)  # None: NaN
        score[status == STATUS_CODES["failed"]] = np.nan
        turn = np.array(turns, dtype=np.int64).reshape(size)
        tasks, task = _codes(task_names)
        models, model = _codes(model_names)
        variants, variant = _codes(variant_names)
        conversations, conversation = _codes(conversation_ids)
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
            scores,
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
        mask = self.task == self.tasks.index(task)
        return [self.variants[v] for v in np.unique(self.variant[mask])]

    def task_models(self, task: str, variant: str) -> list[str]:
        mask = self.cell(task, variant) & self.scored
        return [self.models[m] for m in np.unique(self.model[mask])]

    def records_at(self, mask: BoolArray) -> list[ItemRecord]:
        return [self.records[i] for i in np.flatnonzero(mask)]
