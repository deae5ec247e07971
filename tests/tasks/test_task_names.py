"""Guard: nothing outside `tasks/` names a task. Every list of tasks is read from the
registry and everything that depends on which task it is is asked of the task's declaration,
so a string literal equal to a registered task's name is a hand-written list or a switch on a
name, and fails here.

Data field names aside: the dataset format has fields called `rating`, `outcome`,
`preference`, `response` and `context.emotion`, which the data layer and the collection app
read and write, and OpenAI's API has `response` objects. Those places are listed, each with
why; a file is never exempt for a name it uses as a task's.
"""

from __future__ import annotations

import ast
from pathlib import Path

from attunebench.tasks import load_tasks

SRC = Path(__file__).resolve().parents[2] / "src" / "attunebench"
# Folders and files whose task-like strings are field names of a format, not tasks.
FORMATS = {
    "data": "the attunebench/v1 dataset format's fields and its importers",
    "collect": "the collection app writes attunebench/v1 fields",
    "records_v1.py": "reads run records of format v1, which named its tasks",
    # A selection, not a list of every task: a suite names the tasks it is made of, as a run
    # names its `--task`s.
    "suite/make.py": "the open suite's definition: the tasks it selects, per corpus",
}
# (file, name): where a task's name is the name of something else.
HOMONYMS = {
    ("models/openai_batch.py", "response"): "a batch result line's `response` object",
    ("testing/openai_stub.py", "response"): "a batch result line's `response` object",
    ("simulators/grading.py", "rating"): "the dataset's `rating` field, whose provenance it reads",
    ("simulators/seeker.py", "outcome"): "the dataset's `outcome` field, whose provenance it reads",
    ("testing/planted_parts.py", "rating"): "the dataset's `rating` field's provenance",
    ("testing/planted_parts.py", "outcome"): "the dataset's `outcome` field's provenance",
}
# Still to do: none (a file that names tasks for a while is listed here, with why).
KNOWN: set[str] = set()


def exempt(relative: str) -> bool:
    return relative in KNOWN or any(
        relative == place or relative.startswith(place + "/") for place in FORMATS
    )


def task_name_literals(root: Path, names: set[str]) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith("tasks/") or exempt(relative):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            named = isinstance(node, ast.Constant) and node.value in names
            if named and (relative, node.value) not in HOMONYMS:
                found.append(f"{relative}:{node.lineno}: {node.value!r}")
    return found


def test_no_task_name_outside_tasks() -> None:
    assert task_name_literals(SRC, set(load_tasks().names())) == []


def test_the_guard_finds_a_planted_name_and_passes_field_names(tmp_path: Path) -> None:
    for folder in ("engine", "data", "tasks"):
        (tmp_path / folder).mkdir()
    (tmp_path / "engine" / "lists.py").write_text('TASKS = ("emotion", "other")\n')
    (tmp_path / "data" / "fields.py").write_text('FIELD = "emotion"\n')  # a format's field
    (tmp_path / "tasks" / "emotion.py").write_text('TASK = "emotion"\n')  # its own module
    assert task_name_literals(tmp_path, {"emotion"}) == ["engine/lists.py:1: 'emotion'"]


def test_every_exemption_still_exists() -> None:
    for place in [*FORMATS, *KNOWN, *(file for file, _ in HOMONYMS)]:
        assert (SRC / place).exists(), place
