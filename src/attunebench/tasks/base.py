"""What a task is: items drawn from a dataset, and an async evaluation of one item.

A task module registers a factory with `TASKS`; the factory's keyword arguments are the task's
options and are recorded in run.json. The engine calls `items()` once per dataset, groups the
items by conversation (turn order kept, so prompts sharing a prefix reach a server back to
back), and calls `evaluate()` for each (item, model), passing a `Caller` that does every model
call: caching, retries, concurrency and the ledger are the engine's business, not the task's.

A task may say which hint kinds it asks of the models it evaluates (`subject_hints`) and of
its judges (`judge_hints`); the plan then leaves out a model that cannot answer them (a
baseline with no reply to write) rather than calling it to fail, and refuses a judge that
cannot. Both are optional, read by `needed_hints`: a task without them asks nothing checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from attunebench.data.schema import Conversation, Taxonomy
from attunebench.models.base import GenerateParams, Message, supports_hint
from attunebench.models.hints import HintKind, TaskHint
from attunebench.records import ItemRecord, PromptInfo, SkippedPair
from attunebench.registry import Registry

CallRole = Literal["subject", "judge"]


@dataclass(frozen=True, slots=True)
class Item:
    """One unit of evaluation, addressed by (task, conversation_id, turn_index, item_id)."""

    task: str
    conversation: Conversation
    turn_index: int
    item_id: str
    taxonomy: Taxonomy
    variant: str = ""

    @property
    def key(self) -> str:
        parts = (self.task, self.conversation.id, str(self.turn_index), self.item_id, self.variant)
        return "|".join(parts)


@dataclass(frozen=True, slots=True)
class CallResult:
    """The outcome of one model call, after the engine's bounded retries."""

    text: str | None
    error: str | None = None
    cache_hit: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.text is not None


class Caller(Protocol):
    """Makes model calls on a task's behalf (implemented by the engine)."""

    async def call(
        self,
        model: str,
        messages: list[Message],
        *,
        prompt: PromptInfo,
        item: Item,
        role: CallRole = "subject",
        params: GenerateParams | None = None,
        hint: TaskHint | None = None,
    ) -> CallResult: ...


class Task(Protocol):
    @property
    def name(self) -> str:
        """The task's registered name (read-only, so frozen task classes satisfy it)."""
        ...

    @property
    def prompts(self) -> list[PromptInfo]:
        """Every prompt template this task may use, with versions (for run.json and cache keys)."""
        ...

    @property
    def options(self) -> dict[str, Any]: ...

    def items(self, conversations: Iterable[Conversation]) -> Iterator[Item]: ...

    async def evaluate(
        self, item: Item, model: str, caller: Caller, judges: list[str]
    ) -> ItemRecord: ...


TaskFactory = Callable[..., Task]
TASKS: Registry[TaskFactory] = Registry("task")


class PlanError(ValueError):
    """A task cannot run with this plan (for example, a judged task with no judge)."""


def evaluated_models(task: Task, models: Sequence[str], judges: Sequence[str]) -> list[str]:
    """The models a task's items are evaluated with, checked when the plan is made.

    A task evaluates the run's subject models, unless it sets `evaluates = "judges"` (the
    judge audit), whose "model" is each judge in turn. A task that sets `needs_judge = True`
    refuses a plan without a judge before any call is made.
    """
    if getattr(task, "needs_judge", False) and not judges:
        raise PlanError(f"task {task.name!r} needs at least one judge (--judge SPEC)")
    if getattr(task, "evaluates", "models") == "judges":
        return list(judges)
    return list(models)


def needed_hints(task: Task, role: CallRole) -> frozenset[HintKind]:
    """The hint kinds `task` sends to its evaluated models (`subject`) or its judges (`judge`),
    by its optional `subject_hints` and `judge_hints` attributes (none declared: none)."""
    declared = getattr(task, "subject_hints" if role == "subject" else "judge_hints", None)
    return frozenset(declared or ())


def missing_hints(task: Task, role: CallRole, provider: object) -> list[HintKind]:
    """The kinds `task` needs in `role` that `provider` does not answer, in a stable order."""
    return sorted(k for k in needed_hints(task, role) if not supports_hint(provider, k))


def applicable_models(
    task: Task, models: Sequence[str], judges: Sequence[str], providers: Mapping[str, object]
) -> tuple[list[str], list[SkippedPair]]:
    """The evaluated models (see `evaluated_models`) that can answer `task`, and the rest.

    A model lacking a hint kind the task needs is left out with the reason; a judge lacking
    one of the judge kinds is a `PlanError`, since the task's every item needs every judge.
    """
    for judge in judges:
        lacking = missing_hints(task, "judge", providers[judge])
        if lacking:
            raise PlanError(
                f"judge {judge!r} cannot answer the {_kinds(lacking)} items task {task.name!r} "
                "asks its judges for; choose a judge that does, or task options that need "
                "only what it answers"
            )
    kept: list[str] = []
    skipped: list[SkippedPair] = []
    for model in evaluated_models(task, models, judges):
        lacking = missing_hints(task, "subject", providers[model])
        if lacking:
            reason = f"{model} does not answer {_kinds(lacking)} items"
            skipped.append(SkippedPair(task=task.name, model=model, reason=reason))
        else:
            kept.append(model)
    return kept, skipped


def _kinds(kinds: Sequence[str]) -> str:
    return ", ".join(repr(kind) for kind in kinds)
