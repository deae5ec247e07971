"""The fitted baselines taught: their train split read as each task of the run builds its items.

The examples are built here, above the tasks, and handed to the provider (`Provider.learn`):
a provider in `models/` never imports a task. A split that is the evaluated data, or shares
conversations with it, is refused: the gold would leak into the answers.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from attunebench.data.schema import Conversation
from attunebench.frozen import first_problem
from attunebench.models.base import Provider
from attunebench.models.registry import ProviderConfigError
from attunebench.tasks.base import Task
from attunebench.tasks.helpers.fitting import examples
from attunebench.tasks.helpers.twins import DEFAULT_PERSON, PersonOption


class TrainSetError(ProviderConfigError):
    """A train split is missing, malformed (the message names file, line and field), or
    overlaps the evaluated data."""


def read_split(path: Path) -> list[Conversation]:
    """Every conversation of a train split, with errors that name file, line and field."""
    if not path.is_file():
        raise TrainSetError(f"train split {path} does not exist")
    conversations = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                conversations.append(Conversation.model_validate_json(line))
            except ValidationError as error:
                field, problem = first_problem(error, "(record)")
                raise TrainSetError(f"{path}:{number}: {field}: {problem}") from None
    return conversations


def disjoint(
    spec: str, path: Path, split: Sequence[Conversation], evaluated: Collection[str], data: Path
) -> None:
    """Refuse a train split that is the evaluated data or shares conversations with it."""
    if path.resolve() == data.resolve():
        raise TrainSetError(f"{spec}: the train split is the evaluated data")
    shared = sorted({c.id for c in split} & set(evaluated))
    if shared:
        raise TrainSetError(
            f"{spec}: train split {path} shares {len(shared)} conversation ids with the "
            f"evaluated data (e.g. {shared[0]!r}): fit on a disjoint split"
        )


def teach(
    providers: Iterable[Provider],
    tasks: Sequence[Task[Any, Any]],
    evaluated: Collection[str],
    data: Path,
    person: PersonOption = DEFAULT_PERSON,
) -> None:
    """Hand every fitted baseline the examples its train split gives for these tasks (a split
    shared by several read once)."""
    splits: dict[Path, list[Conversation]] = {}
    lessons: dict[Path, list[Any]] = {}
    for provider in {id(p): p for p in providers}.values():
        path = provider.learns_from
        if path is None:
            continue
        if path not in splits:
            splits[path] = read_split(path)
            lessons[path] = [e for task in tasks for e in examples(task, splits[path], person)]
        disjoint(provider.spec, path, splits[path], evaluated, data)
        provider.learn(lessons[path])
