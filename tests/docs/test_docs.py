"""The docs stay true: every metric documented, the README short with its set-up commands
first, every page in the site's navigation and linked from its first page."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from attunebench.tasks import load_tasks
from attunebench.tasks.helpers.metrics import METRICS

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


def test_the_first_page_links_every_page() -> None:
    linked = set(re.findall(r"\]\(([a-z0-9_-]+\.md)\)", (ROOT / "docs" / "index.md").read_text()))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {"index.md"}
    assert pages - linked == set(), "docs/index.md does not link these pages"
    assert linked <= pages, sorted(linked - pages)


def test_frontier_page_says_which_claude_models_think_unasked_and_what_caches_cost() -> None:
    """As Anthropic documents them: the Claude 5 families think when `thinking` is left out,
    Sonnet 5.5 turns it off with `between_tools`, Fable 5 and Mythos 5 cannot, Sonnet 5 and
    5.5 omit thinking text, and these cache reads are published."""
    text = " ".join((ROOT / "docs" / "frontier.md").read_text().split())
    assert (
        "the Claude 5 families (Opus 5, Sonnet 5, Sonnet 5.5, Haiku 5.5, Fable 5 and 5.1, "
        "Mythos 5, Opus 5.5) think" in text
    )
    assert '`{type = "between_tools"}` on Sonnet 5.5 (which refuses `disabled`)' in text
    assert "(Fable 5 and Mythos 5 and their later versions, Opus 5.5" in text
    assert "Sonnet 5 and 5.5 return no thinking text unless asked" in text
    for published in (
        "| Sonnet 5.5 | $2 | $0.10 | $10 |",
        "| Fable 5 | $10 | $1 | $50 |",
        "| Fable 5.1 | $10 | $0.25 | $50 |",
    ):
        assert published in text
    assert "1.25 times the input price" in text and "twice it" in text


# A module that leaves its reasoning to a docs page names the page, and often its section:
# `docs/report.md ("Power")` or `docs/data.md, "Any corpus as CSV"`.
_POINTER = re.compile(r"docs/([a-z0-9_-]+\.md)(?:\)?[,;]? \(?\"([^\"]+)\")?")


def docs_pointers(text: str) -> list[tuple[str, str | None]]:
    """The (page, section or None) pairs a source text points to, across its line breaks."""
    flat = re.sub(r"\s*\n\s*", " ", text)
    return [(page, section) for page, section in _POINTER.findall(flat)]


def test_docs_pointers_are_read_across_lines() -> None:
    text = 'verdict; docs/report.md ("Do tasks rank\n    models alike?") gives it; docs/api.md.'
    assert docs_pointers(text) == [("report.md", "Do tasks rank models alike?"), ("api.md", "")]


def test_every_docs_page_and_section_the_code_points_to_exists() -> None:
    pages = {p.name: p.read_text() for p in (ROOT / "docs").glob("*.md")}
    missing = []
    for module in sorted((ROOT / "src" / "attunebench").rglob("*.py")):
        for page, section in docs_pointers(module.read_text()):
            headings = re.findall(r"^#+ (.+)$", pages.get(page, ""), re.M)
            if page not in pages or (section and not any(h.startswith(section) for h in headings)):
                missing.append(f"{module.relative_to(ROOT)}: docs/{page} {section or ''}")
    assert missing == []
