"""The docs stay true: every metric documented, the README short with its set-up commands
first, every page in the site's navigation."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from attunebench.tasks import load_tasks
from attunebench.tasks.metrics import METRICS

ROOT = Path(__file__).resolve().parents[2]


def test_every_registered_metric_is_documented() -> None:
    load_tasks()
    documented = set(
        re.findall(
            r"^\| `([a-z_0-9]+\.[a-z_0-9]+)` \|", (ROOT / "docs" / "tasks.md").read_text(), re.M
        )
    )
    assert set(METRICS.names()) <= documented, sorted(set(METRICS.names()) - documented)
    assert documented <= set(METRICS.names()), sorted(documented - set(METRICS.names()))


def test_readme_is_short_and_starts_with_the_two_set_up_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) <= 10_500
    commands = re.findall(r"^make (\w+)", text, re.M)
    assert commands[:2] == ["demo", "test"]


def test_every_docs_page_is_in_the_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = {next(iter(entry.values())) for entry in config["nav"]}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages == listed
