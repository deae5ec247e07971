"""The tasks the test run registers, for a command line run in a child process: the package's
own and the toy task of `tests/tasks/toy` (see `tests/conftest.py`), so that a child's run
makes the same plan as one made in the test's own process; and what `data stats --json` says
of some conversations with every registered task, as the command counts them."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

import attunebench
from attunebench.data.schema import Conversation
from attunebench.data.stats import compute_stats
from attunebench.tasks import load_tasks
from attunebench.tasks.helpers.gold_stats import GoldStats, TaskGold

TASKS_DIR = Path(__file__).parent / "tasks"  # holds the toy task's package
TOY = "toy.intense"


def cli_command() -> list[str]:
    """`attunebench` with the toy task imported first."""
    return [sys.executable, "-c", f"import {TOY}; from attunebench.cli import main; main()"]


def cli_env() -> dict[str, str]:
    """The environment that lets the child import the package and the toy task."""
    source = str(Path(attunebench.__file__).parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([source, str(TASKS_DIR)])}


def gold_stats(conversations: Iterable[Conversation]) -> GoldStats:
    """What `data stats --json` says of these conversations: their stats, with the gold of
    every registered task (each made with its default options, as the command makes it)."""
    conversations = list(conversations)
    gold = TaskGold([load_tasks().get(name)() for name in load_tasks()])
    for conversation in conversations:
        gold.add(conversation)
    return gold.stats(compute_stats(conversations))
