"""AttuneBench's tasks for inspect_ai: `inspect eval attunebench/emotion --model ...`, registered
through inspect_ai's package entry point (docs/interop.md). The scorer reads the answers through
the same `engine.evaluate` every run uses, so each parse and score is written once; the standard
error is clustered by conversation, whose items are not independent.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from attunebench.data.sample import sample_path
from attunebench.data.validate import load_validated
from attunebench.engine.evaluate import evaluate
from attunebench.inspect.offline import provide_encoding
from attunebench.models.base import Message
from attunebench.tasks import load_tasks
from attunebench.tasks.base import CallRole, Item, Output, Query
from attunebench.tasks.base import Task as AttuneTask

provide_encoding()  # inspect's token estimates need a tokenizer file: offline, from disk

ANSWERS = "attunebench_answers"  # where the solver keeps the answers, in the sample's store
JUDGE_ROLE = "grader"


def chat(messages: list[Message]) -> list[ChatMessage]:
    kinds = {
        "system": ChatMessageSystem,
        "user": ChatMessageUser,
        "assistant": ChatMessageAssistant,
    }
    return [kinds[m.role](content=m.content) for m in messages]


def config(query: Query) -> GenerateConfig:
    return GenerateConfig(temperature=query.params.temperature, max_tokens=query.params.max_tokens)


class InspectCaller:
    """Answers AttuneBench's queries with inspect models: answers the solver already had
    first, then the grader for a judge's queries (where the task has judges), else the model
    under evaluation (in the judge audit, the model under evaluation is the judge)."""

    def __init__(self, given: dict[str, str], graded: bool) -> None:
        self.given = given
        self.graded = graded

    async def ask(self, model: str, query: Query, item: Item[Any], role: CallRole) -> Output:
        if query.key in self.given:
            return Output(text=self.given[query.key])
        graded = self.graded and role == "judge"
        target = get_model(role=JUDGE_ROLE) if graded else get_model()
        output = await target.generate(chat(query.messages), config=config(query))
        if output.error:
            return Output(error=output.error)
        return Output(text=output.completion)


def samples(declaration: AttuneTask[Any, Any], data: Path) -> tuple[list[Sample], dict[str, Any]]:
    items = list(declaration.items(load_validated(data)))
    found = []
    for item in items:
        first = declaration.queries(item, "generate")[0]
        found.append(
            Sample(
                id=item.key,
                input=chat(first.messages),
                target=item.gold.model_dump_json(),
                metadata={
                    "conversation": item.conversation.id,
                    "turn": item.turn_index,
                    "item": item.item_id,
                    "variant": item.variant,
                },
            )
        )
    return found, {item.key: item for item in items}


@solver
def ask_questions(declaration: AttuneTask[Any, Any], items: dict[str, Any]) -> Solver:
    """Ask every question of the item (the first is the sample's own input)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        first, *rest = declaration.queries(items[str(state.sample_id)], "generate")
        params = first.params
        state = await generate(state, temperature=params.temperature, max_tokens=params.max_tokens)
        answers = {first.key: state.output.completion}
        for query in rest:
            output = await get_model().generate(chat(query.messages), config=config(query))
            answers[query.key] = output.completion
        state.store.set(ANSWERS, answers)
        return state

    return solve


@scorer(metrics=[mean(), stderr(cluster="conversation")])
def attunebench_score(declaration: AttuneTask[Any, Any], items: dict[str, Any]) -> Scorer:
    """AttuneBench's parse and score of the item's answers (judged in the grader role)."""

    async def score(state: TaskState, target: Target) -> Score:
        item = items[str(state.sample_id)]
        graded = declaration.needs_judge and declaration.evaluates == "models"
        caller = InspectCaller(state.store.get(ANSWERS, {}), graded)
        record = await evaluate(
            declaration, item, "inspect", caller, [JUDGE_ROLE] if graded else []
        )
        value = record.score if record.score is not None else 0.0
        return Score(
            value=value,
            answer=record.raw_output,
            explanation=record.error or f"{record.status}: {declaration.scoring.headline}",
            metadata={
                "status": record.status,
                "scores": record.scores,
                "prediction": record.prediction,
            },
        )

    return score


def _inspect_task(name: str) -> Callable[..., Task]:
    """The inspect task of one AttuneBench task: its options are the factory's keyword
    arguments (the run's `seed` aside), with their defaults, plus `data`."""
    factory = load_tasks().get(name)
    options = [
        parameter
        for parameter in inspect.signature(factory).parameters.values()
        if parameter.name != "seed"
    ]

    def made(data: str | None = None, **chosen: Any) -> Task:
        declaration = factory(**chosen)
        found, items = samples(declaration, Path(data) if data else sample_path())
        return Task(
            dataset=MemoryDataset(found, name=f"attunebench-{name}"),
            solver=ask_questions(declaration, items),
            scorer=attunebench_score(declaration, items),
            name=name,
        )

    data = inspect.Parameter("data", inspect.Parameter.KEYWORD_ONLY, default=None)
    keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in options]
    made.__signature__ = inspect.Signature([data, *keyword])  # type: ignore[attr-defined]
    made.__doc__ = (factory.__doc__ or name).strip().split("\n")[0]
    made.__name__ = made.__qualname__ = name
    made.__module__ = __name__
    return task(name=name)(made)


# Every registered task, made an inspect task by the same name (`attunebench/<name>`).
INSPECT_TASKS: dict[str, Callable[..., Task]] = {
    name: _inspect_task(name) for name in load_tasks().names()
}
globals().update(INSPECT_TASKS)  # `attunebench.inspect.<name>`, as inspect's loader finds them
