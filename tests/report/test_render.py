"""The HTML report: every section, nothing external, everything from the data escaped."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

from attunebench.analysis import Summary
from attunebench.report import SECTIONS, environment, render_html, render_markdown, write_report


def test_environment_doctests_pass() -> None:
    assert doctest.testmod(environment).failed == 0


def test_every_section_is_on_the_page(summary: Summary) -> None:
    page = render_html(summary)
    for section_id, _ in SECTIONS:
        assert f'<section id="{section_id}">' in page, section_id


def test_the_page_needs_nothing_from_outside(summary: Summary) -> None:
    page = render_html(summary)
    assert "<script" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(" not in page


def test_text_from_the_data_is_escaped_everywhere(summary: Summary) -> None:
    page = render_html(summary)
    assert "<img" not in page and "<b>I feel" not in page
    assert "&lt;img src=x" in page  # the hostile model name, shown as text
    assert "&lt;b&gt;I feel" in page  # user text from the dataset, in the worst items


def test_findings_are_on_the_page(summary: Summary) -> None:
    page = render_html(summary)
    assert "informed context helps" in page or "no evidence of a difference" in page
    assert "proxy/minilm" in page and '<span class="kind">proxy</span>' in page
    assert '<span class="kind">baseline</span>' in page
    assert "Kendall tau-b between tasks" in page


def test_markdown_leaderboard_has_a_row_per_model_and_escapes_pipes(
    summary: Summary, hostile_name: str
) -> None:
    text = render_markdown(summary)
    assert text.count("\n## ") == len(summary.tasks) + 1  # a table per task, discriminability
    assert hostile_name.replace("|", "\\|") in text
    for model in ("m/model0", "m/model1", "m/model2", "baseline/random"):
        assert text.count(f"| {model} |") == len(summary.tasks)


def test_write_report_writes_the_requested_files(summary: Summary, tmp_path: Path) -> None:
    html = write_report(summary, tmp_path / "html")
    assert sorted(p.name for p in html) == ["report.html", "summary.json"]
    markdown = write_report(summary, tmp_path / "md", "markdown")
    assert sorted(p.name for p in markdown) == ["leaderboard.md", "summary.json"]
    only = write_report(summary, tmp_path / "json", "json")
    assert [p.name for p in only] == ["summary.json"]
    assert (tmp_path / "html" / "report.html").stat().st_mode & 0o044  # readable by others
