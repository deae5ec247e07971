"""The plan of a run: the tasks, and which models each task evaluates.

Whatever is known before any call to be unanswerable is left out here, with its reason, never
run to fail: a task that needs a judge in a run with none (refused if asked for by name), a
model that does not answer a hint kind the task sends, a model in `choice` mode that cannot
give option probabilities. A judge that cannot answer a task is a `PlanError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attunebench.engine.caller import BoundModel
from attunebench.records import SkippedPair
from attunebench.registry import RegistryError
from attunebench.tasks import load_tasks
from attunebench.tasks.base import PlanError, Task

ALL = "all"
EVERY_MODEL = "(every model)"


def task_names(requested: Sequence[str]) -> list[str]:
    """`all` means every registered task; unknown names fail with the known ones listed."""
    tasks = load_tasks()
    if ALL in requested:
        if not tasks.names():
            raise RegistryError("no tasks are registered")
        return tasks.names()
    names = list(dict.fromkeys(requested))
    for name in names:
        tasks.get(name)  # raises RegistryError naming the known tasks
    return names


def without_judge(
    tasks: Sequence[Task[Any, Any]], judges: Sequence[str], from_all: bool
) -> tuple[list[Task[Any, Any]], list[SkippedPair]]:
    """The tasks a run without judges can do; the others left out (from `all`) or refused."""
    if judges:
        return list(tasks), []
    needing = [task for task in tasks if task.needs_judge]
    if needing and not from_all:
        names = ", ".join(repr(task.name) for task in needing)
        raise PlanError(f"task {names} needs at least one judge (--judge SPEC)")
    skipped = [
        SkippedPair(task=task.name, model=EVERY_MODEL, reason="needs a judge (--judge SPEC)")
        for task in needing
    ]
    return [task for task in tasks if not task.needs_judge], skipped


def evaluated_models(
    task: Task[Any, Any], subjects: Sequence[str], judges: Sequence[str]
) -> list[str]:
    """The judge audit evaluates the judges; every other task the subject models."""
    return list(judges) if task.evaluates == "judges" else list(subjects)


def _lacking(task: Task[Any, Any], model: BoundModel, role: str) -> str | None:
    """Why `model` cannot answer `task` in `role`, or None."""
    provider = model.provider
    forms = task.subject_forms if role == "subject" else task.judge_forms
    for form in sorted(forms, key=lambda form: form.kind):
        if not provider.answers_form(form):
            return provider.unsupported_reason(form.kind)
    if model.choosing and "choice" in task.answer_modes and "choice" not in provider.answer_modes:
        return provider.mode_reason("choice")
    if (
        role == "judge"
        and model.choosing
        and any(form.kind == "judge_rubric" for form in task.judge_forms)
    ):
        return f"{provider.spec} answers in choice mode, and the rubric has no choice form"
    return None


def applicable(
    tasks: Sequence[Task[Any, Any]],
    subjects: Sequence[str],
    judges: Sequence[str],
    bound: Mapping[str, BoundModel],
) -> tuple[dict[str, list[str]], list[SkippedPair]]:
    """Each task's models that can answer it, and the (task, model) pairs left out."""
    evaluated: dict[str, list[str]] = {}
    skipped: list[SkippedPair] = []
    for task in tasks:
        for judge in judges:
            reason = _lacking(task, bound[judge], "judge")
            if reason is not None:
                raise PlanError(
                    f"judge {judge!r} cannot judge task {task.name!r}: {reason}; choose a judge "
                    "that can, or task options that need only what it answers"
                )
        kept = evaluated[task.name] = []
        for model in evaluated_models(task, subjects, judges):
            reason = _lacking(task, bound[model], "subject")
            if reason is None:
                kept.append(model)
            else:
                skipped.append(SkippedPair(task=task.name, model=model, reason=reason))
    return evaluated, skipped
