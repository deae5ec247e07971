"""The floor plan of docs/architecture.md holds: every import, at the top of a module or inside a
function, goes from a part of `attunebench` to a part on a strictly lower floor, so the parts
form no cycle.

The imports are read from the source with `ast` (nothing is imported), the floors from the
documentation's table, so the plan and the code cannot drift apart unnoticed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "attunebench"
PLAN = ROOT / "docs" / "architecture.md"


def parts() -> set[str]:
    """Every package and top-level module of attunebench, and the package itself."""
    found = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    found |= {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return found | {"attunebench"}


def part_of(module: str, names: set[str]) -> str | None:
    """The part a dotted module name belongs to (`attunebench.tasks.base` -> `tasks`)."""
    top, _, rest = module.partition(".")
    if top != "attunebench":
        return None
    head = rest.partition(".")[0]
    return head if head in names else "attunebench"


def imported(tree: ast.AST, names: set[str]) -> Iterator[str]:
    """The parts every import of a module names, lazy ones inside functions included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from attunebench import tasks` names the part `tasks`.
            modules = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for module in modules:
            part = part_of(module, names)
            if part is not None:
                yield part


def import_graph() -> dict[str, frozenset[str]]:
    """Part -> the other parts it imports."""
    names = parts()
    edges: dict[str, set[str]] = {name: set() for name in names}
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        me = part_of(module.removesuffix(".__init__"), names)
        assert me is not None
        edges[me] |= set(imported(ast.parse(path.read_text(encoding="utf-8")), names)) - {me}
    return {name: frozenset(targets) for name, targets in edges.items()}


def floors() -> dict[str, int]:
    """The floor of each part, from the plan's table (`| 3 | `models` | ... |`)."""
    found: dict[str, int] = {}
    for line in PLAN.read_text(encoding="utf-8").splitlines():
        row = re.match(r"\| (\d+) \| ([^|]+) \|", line)
        if row:
            for name in re.findall(r"`([a-z_0-9]+)`", row.group(2)):
                assert name not in found, f"{PLAN.name}: {name} stands on two floors"
                found[name] = int(row.group(1))
    return found


def test_every_part_has_a_floor_and_the_plan_names_no_other() -> None:
    assert set(floors()) == parts()


def test_every_import_goes_to_a_lower_floor() -> None:
    floor = floors()
    upward = sorted(
        f"{source} (floor {floor[source]}) imports {target} (floor {floor[target]})"
        for source, targets in import_graph().items()
        for target in targets
        if floor[target] >= floor[source]
    )
    assert not upward, "; ".join(upward)


def test_the_parts_form_no_cycle() -> None:
    try:
        TopologicalSorter(import_graph()).prepare()
    except CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(reversed(error.args[1]))}")


def test_the_graph_sees_lazy_imports_and_parts_of_the_package() -> None:
    names = {"tasks", "models", "attunebench"}
    tree = ast.parse(
        "from attunebench import tasks, __version__\ndef f():\n    import attunebench.models.sim\n"
    )
    assert sorted(imported(tree, names)) == ["attunebench", "models", "tasks"]
