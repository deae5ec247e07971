"""The records behind a task's numbers: one cell per (task, variant), on common items.

Models compared on different items are not compared at all: a model whose API refused the
hardest turns would be scored on the easy ones. So by default a cell keeps only the items
every model under test in it answered (`ok` or `invalid`: an invalid answer is an answer,
scored as the worst value); the items some model under test has no answer for (a failed call, a
merged partial run) are left out of every model's numbers and listed with the reason.

Yardsticks (baselines, mock, proxy and simulated models not under test) never decide which
items count: a baseline's failed calls must not take items away from the models under test.
They are scored on the same common items where they have them, and a warning says how many they
lack. A cell with no model under test (a judge audit, a run of baselines alone) compares its
models among themselves. `all_items=True` keeps every answered item instead, and a warning says
the models' items differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from pydantic import ValidationError

from attunebench.analysis.frame import STATUS_CODES, BoolArray, Frame, IntArray, present
from attunebench.analysis.schema import LeftOutItem, item_address
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Scoring, Task, View, takes_option

SHOWN_LEFT_OUT = 20  # items listed per cell; the rest are counted
_NO_ROWS = np.zeros(0, dtype=np.intp)
_NO_ROWS.flags.writeable = False
_STATUS_NAMES = {code: name for name, code in STATUS_CODES.items()}  # the frame's status codes


def task_object(name: str, made_with: Mapping[str, Any] | None = None) -> Task[Any, Any] | None:
    """The declaration of a task by name, or None if unknown: made with the options a run
    recorded (those its factory still takes), else with its defaults."""
    tasks = load_tasks()
    if name not in tasks:
        return None
    factory = tasks.get(name)
    return factory(**{k: v for k, v in (made_with or {}).items() if takes_option(factory, k)})


@dataclass(frozen=True)
class Cell:
    """One task and variant: the records its numbers use, and the typed view of each (read
    when first asked for: numbers the records hold are read from the frame's columns)."""

    task: str
    variant: str
    declaration: Task[Any, Any] | None
    mask: BoolArray  # the records scored here (common items, ok or invalid)
    left_out: list[LeftOutItem]
    left_out_count: int
    items_differ: bool  # with all_items: the models were scored on different items
    frame: Frame = field(repr=False, compare=False)
    lacking: Mapping[str, int] = field(default_factory=dict)  # yardstick -> common items it lacks
    common: int = 0  # the items every compared model answered
    # Per model, its metrics' readings of its views (by `values` function), kept for the
    # diagnostics that read the same answers (a calibration metric's rows give the diagram).
    readings: dict[int, dict[Any, Any]] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def views(self) -> Mapping[int, View[Any, Any]]:
        """Record index -> typed view, for every record of the cell."""
        if self.declaration is None:
            return {}
        return typed_views(self.declaration, self.frame, self.mask)

    @cached_property
    def judges(self) -> dict[str, list[str]]:
        """Per model, the judges whose verdicts are behind its numbers."""
        if self.declaration is not None and not self.declaration.needs_judge:
            return {}  # no judge was asked: its records hold no verdicts
        frame = self.frame
        # each verdict of the cell's records (the frame's verdict columns), as (model, judge)
        held = self.mask[frame.verdict_record]
        models = frame.model[frame.verdict_record[held]]
        pairs = np.unique(models * len(frame.judges) + frame.verdict_judge[held])
        out: dict[str, list[str]] = {}
        for pair in pairs.tolist():  # by model, then judge: each model's judges come sorted
            model, judge = divmod(pair, len(frame.judges))
            out.setdefault(frame.models[model], []).append(frame.judges[judge])
        return out

    def rows(self, frame: Frame, model: int) -> np.ndarray:
        """The model's records in the cell, in the frame's order (read-only)."""
        if frame is not self.frame:
            return np.flatnonzero(self.mask & (frame.model == model))
        found = self._model_rows.get(int(model))
        return found if found is not None else _NO_ROWS

    @cached_property
    def _model_rows(self) -> dict[int, IntArray]:
        """Each model's records in the cell, from one pass over the cell (the steps of the
        summary ask for them per model, a hundred times and more)."""
        rows = np.flatnonzero(self.mask)
        if len(rows) == 0:
            return {}
        models = self.frame.model[rows]
        order = np.argsort(models, kind="stable")  # each model's rows stay in order
        present, starts = np.unique(models[order], return_index=True)
        out = {}
        for model, part in zip(present.tolist(), np.split(rows[order], starts[1:]), strict=True):
            part.flags.writeable = False
            out[model] = part
        return out

    def model_views(self, frame: Frame, model: int) -> list[View[Any, Any]]:
        views = self.views
        return [views[i] for i in self.rows(frame, model).tolist()]


def _failure_reasons(frame: Frame, rows: np.ndarray) -> str:
    reasons: Counter[str] = Counter()
    for i in rows:
        record = frame.records[i]
        if record.status == "failed":
            reasons[f"{record.model}: {(record.error or 'failed').split('; ')[0][:160]}"] += 1
    return "; ".join(reason for reason, _ in reasons.most_common(3)) or "not recorded"


def typed_views(
    declaration: Task[Any, Any], frame: Frame, keep: BoolArray
) -> dict[int, View[Any, Any]]:
    """The typed view of each kept record, as `Scoring.view` makes it, built faster: each
    distinct gold and prediction the records hold (the frame's codes) is read into its type
    once and shared (frozen). Gold and prediction are validated, which pydantic does faster
    than it constructs a model unvalidated; one that does not validate (written by an older
    version, say) is constructed as `Scoring.view` would."""
    if (
        type(declaration.scoring).view is not Scoring.view
    ):  # a task that reads its records its own way
        return {int(i): declaration.scoring.view(frame.records[i]) for i in np.flatnonzero(keep)}
    rows = np.flatnonzero(keep)
    gold_type, prediction_type = declaration.gold_type, declaration.prediction_type
    golds = _typed(frame.golds, frame.gold[rows], lambda found: _read(gold_type, found or {}))
    predictions = _typed(
        frame.predictions,
        frame.prediction[rows],
        lambda found: None if found is None else _read(prediction_type, found),
    )
    statuses = map(_STATUS_NAMES.__getitem__, frame.status[rows].tolist())
    views = map(View, frame.records_at(keep), golds, predictions, statuses)
    return dict(zip(rows.tolist(), views, strict=True))


def _typed(distinct: Sequence[Any], codes: IntArray, read: Callable[[Any], Any]) -> list[Any]:
    """Each record's value (its code among `distinct`) read by `read`, once per distinct one."""
    typed = {code: read(distinct[code]) for code in present(codes, len(distinct))}
    return list(map(typed.__getitem__, codes.tolist()))


def _read(model: type[Any], found: dict[str, Any]) -> Any:
    """A gold or prediction in its type: validated (faster than constructing it unvalidated,
    and typed), or as `Scoring.view` makes it where an older record's does not validate."""
    try:
        return model.__pydantic_validator__.validate_python(found)
    except ValidationError:
        return model.model_construct(**found)


def build_cell(
    frame: Frame,
    task: str,
    variant: str,
    all_items: bool,
    subjects: Collection[int] = (),
    made_with: Mapping[str, Any] | None = None,
) -> Cell:
    """The cell's records: the items every compared model answered (see the module docstring);
    `subjects` are the frame codes of the models under test, `made_with` the task's options
    as the run recorded them."""
    cell = frame.cell(task, variant)
    answered = cell & frame.answered
    models = present(frame.model[cell], len(frame.models))
    held = _answered_items(frame, answered)  # (models, items): which items each answered
    compared = [m for m in models if m in subjects] or models
    answering = held[[m for m in compared if held[m].any()]]
    every: BoolArray = np.logical_or.reduce(answering, axis=0)
    # (and `every`: where no model answered any item, none is common)
    common: BoolArray = np.logical_and.reduce(answering, axis=0) & every
    keep = answered.copy()
    left_out: list[LeftOutItem] = []
    missing = np.flatnonzero(every & ~common)
    lacking: dict[str, int] = {}
    if not all_items:
        keep &= common[frame.item]
        for code in missing[:SHOWN_LEFT_OUT].tolist():
            rows = np.flatnonzero(cell & (frame.item == code))
            record = frame.records[rows[0]]
            absent = sorted(frame.models[m] for m in compared if not held[m, code])
            left_out.append(
                LeftOutItem(
                    **item_address(task, variant, record),
                    missing_for=absent,
                    reason=_failure_reasons(frame, rows),
                )
            )
        short = {m: int(np.count_nonzero(common & ~held[m])) for m in models if m not in compared}
        lacking = {frame.models[m]: n for m, n in short.items() if n}
    everyone = held[[m for m in models if held[m].any()]]
    differ = all_items and len(everyone) > 1 and bool((everyone.any(0) != everyone.all(0)).any())
    return Cell(
        task,
        variant,
        task_object(task, made_with),
        keep,
        left_out,
        len(missing),
        differ,
        frame,
        lacking,
        int(np.count_nonzero(common)),
    )


def _answered_items(frame: Frame, answered: BoolArray) -> BoolArray:
    """(the frame's models, its item codes): whether the model answered the item among the
    `answered` records; one pass, where a set per model cost a mask of the frame each."""
    rows = np.flatnonzero(answered)
    held = np.zeros((len(frame.models), int(frame.item.max(initial=-1)) + 1), dtype=bool)
    held[frame.model[rows], frame.item[rows]] = True
    return held
