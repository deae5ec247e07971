"""`attunebench demo` run once, in a subprocess whose only site-packages holds what `make demo`
installs (the core and the `ml` and `lexicon` extras): test_demo_install checks that it runs
with nothing else importable, test_demo checks what it wrote. One run serves both (the demo
encodes its train split with a sentence encoder: about 20 s on two cores).

The test venv has every extra, so a module-level import of, say, pydantic-settings from the
CLI would pass every other test and break `make demo` on a fresh machine. The site is worked
out from pyproject.toml and the installed packages' own requirements.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

DEMO_EXTRAS = frozenset({"ml", "lexicon"})  # the Makefile's DEMO_EXTRAS
# What the Makefile installs with --no-deps beside them: the NRC lexicon's JSON, without the
# textblob and nltk that nrclex would pull.
NO_DEPS = frozenset({"nrclex"})
DEMO_ARGUMENTS = ("--esconv", "2", "--train-esconv", "4", "--resamples", "200")

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"
SRC = Path(__file__).parents[2] / "src"
Wanted = tuple[str, frozenset[str]]


def installed_closure(wanted: list[Wanted]) -> set[str]:
    """The distributions `wanted` (name and extras) need, transitively, as installed here."""
    seen: set[Wanted] = set()
    stack = list(wanted)
    while stack:
        dist_name, extras = stack.pop()
        key = (canonicalize_name(dist_name), extras)
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.distribution(dist_name).requires or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is not None and not any(
                marker.evaluate({"extra": extra}) for extra in (extras or {""})
            ):
                continue
            stack.append((requirement.name, frozenset(requirement.extras)))
    return {dist for dist, _ in seen}


def project_requirements(extras: Iterable[str]) -> list[Wanted]:
    """The core dependencies and those of `extras`, read from pyproject.toml."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    texts = list(project["dependencies"])
    for extra in extras:
        texts += project["optional-dependencies"][extra]
    return [(r.name, frozenset(r.extras)) for r in map(Requirement, texts)]


def demo_site(folder: Path) -> Path:
    """A site-packages holding only what `make demo` installs: links to the installed files of
    every distribution the core and the demo extras need (attunebench itself comes from src)."""
    allowed = installed_closure(project_requirements(DEMO_EXTRAS)) - {"attunebench"} | NO_DEPS
    folder.mkdir()
    for dist in metadata.distributions():
        if canonicalize_name(dist.metadata["Name"]) not in allowed:
            continue
        for top in {file.parts[0] for file in dist.files or []}:
            link = folder / top
            if top == ".." or top.endswith(".pth") or link.exists():
                continue
            link.symlink_to(Path(str(dist.locate_file(top))))
    return folder


@dataclass(frozen=True)
class DemoRun:
    site: Path  # the demo's only site-packages
    out: Path  # the demo's --out folder
    done: subprocess.CompletedProcess[str]


def run_demo(work: Path) -> DemoRun:
    """`attunebench demo --out work/demo` on a small slice, with only the demo's packages."""
    site = demo_site(work / "site")
    out = work / "demo"
    command = [sys.executable, "-S", "-c", "from attunebench.cli import main; main()", "demo"]
    command += ["--out", str(out), *DEMO_ARGUMENTS]
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{site}"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    return DemoRun(site, out, done)
