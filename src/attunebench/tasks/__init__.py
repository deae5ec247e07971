"""The tasks: emotion, behavior, preference, rating, outcome, response, and the judge audit.

A task is one module with its prompt file beside it (see `tasks.base`). `load_tasks()` imports
every module of this package, and each task module registers itself with `TASKS`, so adding a
task touches nothing else. A task is made by name with its options as keyword arguments:
`load_tasks().get("preference")(context="both")`.
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
    InvalidAnswer,
    Item,
    Output,
    PlanError,
    Query,
    Scored,
    Task,
    TaskFactory,
    View,
)
from attunebench.tasks.helpers.history import CONTEXT_MODES, DEFAULT_CONTEXT
from attunebench.tasks.helpers.metrics import METRICS, Metric


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
    "InvalidAnswer",
    "Item",
    "Metric",
    "Output",
    "PlanError",
    "Query",
    "Scored",
    "Task",
    "TaskFactory",
    "View",
    "Weights",
    "load_tasks",
    "make_tasks",
]
