"""The tasks: emotion, behavior, preference, response, and the judge audit.

Importing this package registers every task with `TASKS` (and, through `attunebench.judge`,
the offline `proxy/` judge). A task is made by name with its options as keyword arguments:
`TASKS.get("preference")(context="both")`.
"""

from attunebench.tasks import behavior as _behavior  # noqa: F401  (registers "behavior")
from attunebench.tasks import emotion as _emotion  # noqa: F401  (registers "emotion")
from attunebench.tasks import judge_audit as _judge_audit  # noqa: F401  (registers "judge_audit")
from attunebench.tasks import preference as _preference  # noqa: F401  (registers "preference")
from attunebench.tasks import response as _response  # noqa: F401  (registers "response")
from attunebench.tasks.base import (
    TASKS,
    Caller,
    CallResult,
    Item,
    PlanError,
    Task,
    applicable_models,
    evaluated_models,
    needed_hints,
)
from attunebench.tasks.behavior import BehaviorTask
from attunebench.tasks.emotion import EmotionTask
from attunebench.tasks.history import CONTEXT_MODES, DEFAULT_CONTEXT
from attunebench.tasks.judge_audit import JudgeAuditTask
from attunebench.tasks.metrics import HEADLINE, METRICS, Metric, behavior_label_f1, metrics_for
from attunebench.tasks.parsing import InvalidAnswer
from attunebench.tasks.preference import PreferenceTask
from attunebench.tasks.response import ResponseTask

__all__ = [
    "CONTEXT_MODES",
    "DEFAULT_CONTEXT",
    "HEADLINE",
    "METRICS",
    "TASKS",
    "BehaviorTask",
    "CallResult",
    "Caller",
    "EmotionTask",
    "InvalidAnswer",
    "Item",
    "JudgeAuditTask",
    "Metric",
    "PlanError",
    "PreferenceTask",
    "ResponseTask",
    "Task",
    "applicable_models",
    "behavior_label_f1",
    "evaluated_models",
    "metrics_for",
    "needed_hints",
]
