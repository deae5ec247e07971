"""Every module of the task and judge packages imports on its own: none depends on another
having been imported first (a circular import between `tasks.helpers.prompting` and
`tasks.helpers.judging` once broke `import attunebench.tasks.emotion` in a fresh interpreter)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import attunebench.judge
import attunebench.tasks

# In one fresh interpreter: each module imported with no attunebench module loaded before it
# (third-party packages stay loaded, so this takes seconds, not one interpreter per module).
SCRIPT = """
import importlib, sys, traceback
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "attunebench" or m.startswith("attunebench.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name}: {error!r}")
print("\\n".join(failed))
"""


def modules() -> list[str]:
    found = []
    for package in (attunebench.tasks, attunebench.judge):
        walked = pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")
        found += [m.name for m in walked]
    return sorted(found)


def test_every_task_and_judge_module_imports_first() -> None:
    names = modules()
    assert (
        "attunebench.tasks.helpers.prompting" in names
        and "attunebench.tasks.helpers.judging" in names
    )
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, *names], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "", run.stdout
