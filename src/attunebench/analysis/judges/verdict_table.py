"""Every pairwise verdict of a run's judges as one table, in content terms.

A comparison is two replies, `first` and `second`, asked in two orders (`order` 0 shows the
first as A). A verdict names the first, the second or a tie; an unusable one is `NONE` (missing,
not a loss: these tables measure how judges judge). Failed records are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attunebench.analysis.frame import FloatArray, Frame, IntArray
from attunebench.records import ItemRecord

FIRST, SECOND, TIE, NONE = 0, 1, 2, -1
# What a row comes from: a judged answer (the judges on a model's reply) or the judge audit
# (a judge on the participants' own pair). Kinds of rows, not task names: which task is which
# is asked of the records (judged answers carry pairwise verdicts) and of the caller (`audits`).
JUDGED, AUDIT = "judged", "audit"
MODEL_FIRST = "model-first"
AUDIT_VARIANT = "informed"  # the response task's judges see what the participant told us
AUDIT_ORDERS = ("ab", "ba")


@dataclass(frozen=True)
class VerdictTable:
    """One row per verdict; `unit` codes a comparison (both orders, every judge)."""

    judges: tuple[str, ...]
    judge: IntArray
    task: tuple[str, ...]  # per row: JUDGED or AUDIT
    judged_tasks: tuple[str, ...]  # the tasks whose records carried pairwise verdicts
    variant: tuple[str, ...]
    unit: IntArray
    order: IntArray
    pick: IntArray
    truth: IntArray  # the participant's pick; NONE in the response task
    conversation: IntArray  # the frame's conversation codes
    lengths: FloatArray  # (rows, 2): characters of the first and second reply
    authors: tuple[tuple[str | None, str | None], ...]
    subject: tuple[str | None, ...]  # the evaluated model (response task)

    def is_task(self, task: str) -> np.ndarray[Any, Any]:
        return np.array([t == task for t in self.task], dtype=bool)

    def audit_like_response(self) -> np.ndarray[Any, Any]:
        """The audit verdicts made as the response task's (`informed` where there is one)."""
        audit: np.ndarray[Any, Any] = self.truth != NONE
        informed = audit & np.array([v == AUDIT_VARIANT for v in self.variant], dtype=bool)
        return informed if bool(informed.any()) else audit


def win_for(picks: Any, side: Any) -> FloatArray:
    """The win (1, 0.5 tie, 0) of reply `side` (FIRST or SECOND) under each pick."""
    picks, side = np.asarray(picks), np.asarray(side)
    out: FloatArray = np.where(picks == TIE, 0.5, (picks == side).astype(np.float64))
    return out


def _judged_rows(record: ItemRecord) -> list[tuple[Any, ...]]:
    pairwise = [
        (v, v.order) for v in record.verdicts if v.mode == "pairwise" and v.order is not None
    ]
    if not pairwise:  # most records' verdicts (a judge's ratings) give no row: nothing more read
        return []
    reply = str((record.prediction or {}).get("reply", ""))
    gold = record.gold or {}
    rows = []
    for verdict, named in pairwise:
        comparison, _, order_name = named.partition("/")
        order = 0 if order_name == MODEL_FIRST else 1
        winner = (verdict.parsed or {}).get("winner") if verdict.status == "ok" else None
        if winner == "tie":
            pick = TIE
        elif winner in ("A", "B"):
            pick = FIRST if (winner == "A") == (order == 0) else SECOND
        else:
            pick = NONE
        other = gold.get("chosen_text" if comparison == "vs_chosen" else "rejected_text", "")
        unit = (JUDGED, *record.key, comparison)
        lengths = (len(reply), len(str(other)))
        authors = (record.model, None)
        rows.append(
            (verdict.judge, JUDGED, record.variant, unit, order, pick, NONE, lengths, authors)
        )
    return rows


def _side(key: str | None, gold: dict[str, Any]) -> int:
    if key is None:
        return NONE
    return TIE if key == "tie" else FIRST if key == gold["first"] else SECOND


def _audit_rows(record: ItemRecord) -> list[tuple[Any, ...]]:
    gold = record.gold or {}
    prediction = record.prediction or {}
    truth = TIE if gold.get("tie") or gold.get("chosen") is None else _side(gold["chosen"], gold)
    unit = (AUDIT, *record.key[2:])
    lengths = (gold.get("len_first", 0), gold.get("len_second", 0))
    authors = (gold.get("first_model"), gold.get("second_model"))
    picks = [_side(prediction.get(name), gold) for name in AUDIT_ORDERS]
    return [
        (record.model, AUDIT, record.variant, unit, order, pick, truth, lengths, authors)
        for order, pick in enumerate(picks)
    ]


def verdict_table(frame: Frame, audits: Callable[[str], bool]) -> VerdictTable:
    """The verdicts of every judged answer (records with pairwise verdicts) and of every task
    that `audits` the judges."""
    rows: list[tuple[Any, ...]] = []
    conversations: list[int] = []
    judged: dict[str, None] = {}
    audited = np.isin(frame.task, [code for code, task in enumerate(frame.tasks) if audits(task)])
    # a failed record holds no verdict; only the records that can give rows are walked (most
    # judged records hold a judge's ratings alone, which give no row)
    pairwise = frame.answered & ~audited & frame.pairwise
    walked = np.flatnonzero((frame.answered & audited) | pairwise)
    for i, conversation, audit in zip(
        walked.tolist(),
        frame.conversation[walked].tolist(),
        audited[walked].tolist(),
        strict=True,
    ):
        record = frame.records[i]
        if audit:
            found = _audit_rows(record)
        elif found := _judged_rows(record):  # a record with pairwise verdicts
            judged[record.task] = None
        rows += found
        conversations += [conversation] * len(found)
    return table_of(rows, conversations, tuple(judged))


def table_of(
    rows: Sequence[tuple[Any, ...]], conversations: Sequence[int], judged: tuple[str, ...] = ()
) -> VerdictTable:
    """The table from rows of (judge, task, variant, unit key, order, pick, truth, lengths,
    authors); `judged` names the tasks the judged answers came from."""
    judges = tuple(sorted({row[0] for row in rows}))
    units: dict[Any, int] = {}
    return VerdictTable(
        judges=judges,
        judge=np.array([judges.index(row[0]) for row in rows], dtype=np.int64),
        task=tuple(row[1] for row in rows),
        judged_tasks=judged,
        variant=tuple(row[2] for row in rows),
        unit=np.array([units.setdefault(row[3], len(units)) for row in rows], dtype=np.int64),
        order=np.array([row[4] for row in rows], dtype=np.int64),
        pick=np.array([row[5] for row in rows], dtype=np.int64),
        truth=np.array([row[6] for row in rows], dtype=np.int64),
        conversation=np.array(conversations, dtype=np.int64),
        lengths=np.array([row[7] for row in rows], dtype=np.float64).reshape(len(rows), 2),
        authors=tuple(row[8] for row in rows),
        subject=tuple(row[8][0] if row[1] == JUDGED else None for row in rows),
    )
