"""The tasks: emotion, behavior, preference, rating, outcome, response, and the judge audit.

A task is one module with its prompt file beside it (see `tasks.base`). `load_tasks()` imports
every module of this package, and each task module registers itself with `TASKS`, so adding a
task touches nothing else. A task is made by name with its options as keyword arguments:
`load_tasks().get("preference")(context="both")`.

A task module declares itself with the names exported here, read through the package
(`from attunebench import tasks`, then `tasks.Task`, `tasks.Scoring`, `tasks.Item`,
`tasks.Scored`, `tasks.register_task`, the prompt file's reader `tasks.task_prompt`,
`tasks.calibration_metrics`, `tasks.GoldCounts`, `tasks.answer_fields`, ...), so that no two
tasks repeat the same list of imports; the helper modules every task uses (`history`,
`metrics`, `prompting`) are exported here too. This module imports no task module:
`load_tasks()` does.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from attunebench.registry import Registry
from attunebench.stats import Weights
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
    by_part,
    check_choice,
    in_contexts,
    in_part,
    part_average,
    register_task,
)
from attunebench.tasks.helpers import history, metrics, prompting
from attunebench.tasks.helpers.calibration import calibration_metrics
from attunebench.tasks.helpers.gold_stats import GoldCounts
from attunebench.tasks.helpers.history import CONTEXT_MODES, DEFAULT_CONTEXT
from attunebench.tasks.helpers.metrics import METRICS, Metric
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
    "CONTEXT_MODES",
    "DEFAULT_CONTEXT",
    "METRICS",
    "TASKS",
    "AnswerMode",
    "Gold",
    "GoldCounts",
    "GoldLevel",
    "Guess",
    "InvalidAnswer",
    "Item",
    "JudgedVerdict",
    "Metric",
    "Output",
    "PlanError",
    "Query",
    "RecordedReference",
    "Reference",
    "Repeat",
    "Scored",
    "Scoring",
    "Task",
    "TaskFactory",
    "View",
    "Weights",
    "answer_fields",
    "by_part",
    "calibration_metrics",
    "check_choice",
    "history",
    "in_contexts",
    "in_part",
    "label_list",
    "load_tasks",
    "make_tasks",
    "metrics",
    "part_average",
    "prompting",
    "register_task",
    "task_prompt",
]
