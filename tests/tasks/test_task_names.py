"""Guard: nothing outside `tasks/` names a task. Every list of tasks is read from the
registry and everything that depends on which task it is is asked of the task's declaration,
so a string literal that names a registered task is a hand-written list or a switch on a name,
and fails here.

A literal names a task where its statement is about tasks (an identifier in it says `task`:
`TASKS = (...)`, `record.task == ...`, `make_tasks([...])`) or holds two or more task names (a
hand-written list). A literal equal to a task's name elsewhere is a word of another vocabulary
(a valence label where a task is called `negative`) and passes. A compound statement (`if`,
`for`, `def`) is judged by its header, not by the statements it holds.

Data field names aside: the dataset format has fields called `rating`, `outcome`,
`preference`, `response` and `context.emotion`, which the data layer and the collection app
read and write in lists of fields. Those places are listed, each with why. A field read alone
(`line["response"]`, `provenance.get("rating")`) is no list and passes anywhere.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from attunebench.tasks import load_tasks

SRC = Path(__file__).resolve().parents[2] / "src" / "attunebench"
# Folders and files whose task-like strings are field names of a format, not tasks.
FORMATS = {
    "data": "the attunebench/v1 dataset format's fields and its importers",
    "collect": "the collection app writes attunebench/v1 fields",
    "records_v1.py": "reads run records of format v1, which named its tasks",
}
# Still to do: none (a file that names tasks for a while is listed here, with why).
KNOWN: set[str] = set()


def exempt(relative: str) -> bool:
    return relative in KNOWN or any(
        relative == place or relative.startswith(place + "/") for place in FORMATS
    )


# A compound statement's parts that are statements of their own, judged apart.
NESTED = {"body", "orelse", "finalbody", "handlers", "cases"}


def statements(tree: ast.AST) -> Iterator[ast.stmt]:
    yield from (node for node in ast.walk(tree) if isinstance(node, ast.stmt))


def own_parts(statement: ast.stmt) -> Iterator[ast.AST]:
    """A statement's own expressions: a compound statement's header, not what it holds (a
    `match` keeps its patterns)."""
    for name, value in ast.iter_fields(statement):
        values = value if isinstance(value, list) else [value]
        if name == "cases":
            values = [part for case in value for part in (case.pattern, case.guard)]
        elif name in NESTED:
            continue
        yield from (part for part in values if isinstance(part, ast.AST))


def identifiers(statement: ast.stmt, parts: list[ast.AST]) -> Iterator[str]:
    """The names a statement uses: variables, attributes, keywords, arguments, a def's name."""
    yield from (value for value in vars(statement).values() if isinstance(value, str))
    for node in (node for part in parts for node in ast.walk(part)):
        for field in ("id", "attr", "arg"):
            if isinstance(word := getattr(node, field, None), str):
                yield word


def names_in(statement: ast.stmt, names: set[str]) -> list[ast.Constant]:
    """The literals of task names that name a task in this statement (see the docstring)."""
    parts = list(own_parts(statement))
    found = [
        node
        for part in parts
        for node in ast.walk(part)
        if isinstance(node, ast.Constant) and node.value in names
    ]
    about_tasks = any("task" in word.lower() for word in identifiers(statement, parts))
    return found if about_tasks or len({node.value for node in found}) > 1 else []


def task_name_literals(root: Path, names: set[str]) -> list[str]:
    found: list[tuple[str, int, str]] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith("tasks/") or exempt(relative):
            continue
        for statement in statements(ast.parse(path.read_text(encoding="utf-8"))):
            for node in names_in(statement, names):
                found.append((relative, node.lineno, node.value))
    return [f"{relative}:{line}: {name!r}" for relative, line, name in sorted(found)]


def test_no_task_name_outside_tasks() -> None:
    assert task_name_literals(SRC, set(load_tasks().names())) == []


PLANTED = {
    # Named as tasks: each fails.
    "engine/lists.py": 'TASKS = ("emotion", "other")\n',
    "engine/switch.py": 'def kind(record):\n    if record.task == "emotion":\n        return 1\n',
    "engine/table.py": 'ORDER = {"emotion": 1, "behavior": 2}\n',
    "engine/made.py": 'def made(load_tasks):\n    return load_tasks().get("emotion")\n',
    # The same words in another vocabulary: a valence label, where a task is called negative;
    # the statement that uses it sits inside a loop over tasks, but is not about them.
    "analysis/valence.py": (
        'LABELS = ("negative", "neutral", "positive")\n'
        "def unpleasant(tasks, label):\n"
        "    for task in tasks:\n"
        '        if label.valence == "negative":\n'
        "            return task\n"
    ),
    "data/fields.py": 'FIELDS = ("emotion", "behavior")\n',  # a format's fields
    "tasks/emotion.py": 'TASK = "emotion"\n',  # its own module
}


def test_the_guard_flags_a_name_only_where_it_names_a_task(tmp_path: Path) -> None:
    for relative, text in PLANTED.items():
        (tmp_path / relative).parent.mkdir(exist_ok=True)
        (tmp_path / relative).write_text(text)
    assert task_name_literals(tmp_path, {"emotion", "behavior", "negative"}) == [
        "engine/lists.py:1: 'emotion'",
        "engine/made.py:2: 'emotion'",
        "engine/switch.py:2: 'emotion'",
        "engine/table.py:1: 'behavior'",
        "engine/table.py:1: 'emotion'",
    ]


def test_every_exemption_still_exists() -> None:
    for place in [*FORMATS, *KNOWN]:
        assert (SRC / place).exists(), place
