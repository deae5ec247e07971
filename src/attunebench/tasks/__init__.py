"""The tasks, and the names a task module declares itself with.

`load_tasks()` imports every module of this package, each registering itself with `TASKS`; a
task is made by name with its options: `load_tasks().get("preference")(context="both")`. Task
modules read `Task`, `Scoring`, `Item`, `register_task`, `task_prompt`, ... through this
package, so no two tasks repeat the same imports. This module imports no task module.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from attunebench.registry import Registry
from attunebench.tasks.base import (
    TASKS,
    AnswerMode,
    Gold,
    GoldLevel,
    Guess,
    InvalidAnswer,
    Item,
    JudgedVerdict,
    Output,
    PlanError,
    Query,
    RecordedReference,
    Reference,
    Repeat,
    Scored,
    Scoring,
    Task,
    TaskFactory,
    View,
    chance_by_part,
    in_contexts,
    register_task,
)
from attunebench.tasks.helpers.calibration import calibration_metrics
from attunebench.tasks.helpers.gold_stats import GoldCounts
from attunebench.tasks.helpers.parsing import answer_fields, label_list
from attunebench.tasks.helpers.wording import task_prompt


@cache
def load_tasks() -> Registry[TaskFactory]:
    """Every task of this package, registered (modules are imported once)."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return TASKS


def make_tasks(
    names: Sequence[str], options: Mapping[str, Mapping[str, Any]], seed: int
) -> list[Task[Any, Any]]:
    """Each task from its factory, with its options and the run's seed."""
    registry = load_tasks()
    return [registry.get(name)(seed=seed, **dict(options.get(name, {}))) for name in names]


__all__ = [
    "AnswerMode",
    "Gold",
    "GoldCounts",
    "GoldLevel",
    "Guess",
    "InvalidAnswer",
    "Item",
    "JudgedVerdict",
    "Output",
    "PlanError",
    "Query",
    "RecordedReference",
    "Reference",
    "Repeat",
    "Scored",
    "Scoring",
    "Task",
    "View",
    "answer_fields",
    "calibration_metrics",
    "chance_by_part",
    "in_contexts",
    "label_list",
    "load_tasks",
    "make_tasks",
    "register_task",
    "task_prompt",
]
