"""The HTML report and the markdown leaderboard: every section, nothing external, everything
from the data escaped, the banner and the status line, the claims' tables, and no interval or
verdict where the data cannot support one."""

from __future__ import annotations

import re
from pathlib import Path

from markupsafe import escape

from attunebench.analysis import Options, Summary, build_summary
from attunebench.report import SECTIONS, render_html, render_markdown, write_report
from planted import synthetic
from planted.synthetic import Plan

TASKS = ("emotion", "behavior", "preference", "response")
INTERVAL = re.compile(r"\[-?\d+\.\d+, ?-?\d+\.\d+\]")
VERDICTS = (
    "distinct: rho",
    "agree: rho",
    "cannot tell: rho",
    "informed context helps",
    "informed context hurts",
    "no evidence of a difference",
)


def section(page: str, section_id: str) -> str:
    start = page.index(f'<section id="{section_id}">')
    return page[start : page.index("</section>", start)]


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


def test_findings_and_kinds_are_on_the_page(summary: Summary) -> None:
    page = render_html(summary)
    assert "informed context helps" in page or "no evidence of a difference" in page
    assert "proxy/minilm" in page and '<span class="kind">proxy</span>' in page
    assert '<span class="kind">baseline</span>' in page
    assert "Kendall tau-b between tasks" in page


def test_simulated_data_gets_the_banner_in_both_formats(summary: Summary) -> None:
    (line,) = summary.provenance.banner
    assert line.startswith("simulated data")
    assert f'<p class="banner">{line}</p>' in render_html(summary)
    assert f"**{line}**" in render_markdown(summary)


def test_an_incomplete_run_says_so_in_both_formats(summary: Summary) -> None:
    status = "run incomplete: 3,000 of 8,320 planned items"
    provenance = summary.provenance.model_copy(update={"status": status})
    unfinished = summary.model_copy(update={"provenance": provenance})
    assert f'<p class="status">{status}</p>' in render_html(unfinished)
    assert f"**{status}**" in render_markdown(unfinished)
    assert '<p class="status">' not in render_html(summary)


def test_the_claims_tables_show_reliability_ceiling_verdict_and_ratios(summary: Summary) -> None:
    page = render_html(summary)
    ranks = section(page, "rank-correlation")
    for heading in ("reliability", "ceiling", "disattenuated", "verdict"):
        assert f"<th>{heading}</th>" in ranks
    for pair in summary.rank_correlation.pairs:
        assert escape(pair.verdict_text) in ranks
        assert pair.verdict_text.startswith(("agree", "distinct", "cannot tell", "not computed"))
    assert all(r.task in ranks for r in summary.rank_correlation.reliability)
    found = section(page, "discriminability")
    assert "<th>signal / noise</th>" in found and "<th>conversations needed</th>" in found
    ratios = summary.discriminability.ratios
    assert ratios and all(escape(r.statement) in found for r in ratios)
    text = render_markdown(summary)
    assert "## Discriminability" in text and all(r.statement in text for r in ratios)
    # the markdown report carries the rank agreement too: every pair's verdict and reliability
    agreement = text.split("## Rank agreement between tasks")[1].split("\n## ")[0]
    assert summary.rank_correlation.pairs
    for pair in summary.rank_correlation.pairs:
        assert f"| {pair.task_a} / {pair.task_b} |" in agreement
        assert pair.verdict_text.replace("|", "\\|") in agreement
    assert all(f"| {r.task} |" in agreement for r in summary.rank_correlation.reliability)


def test_left_out_items_and_n_per_bin_are_listed(summary: Summary) -> None:
    page = render_html(summary)
    listed = section(page, "left-out")
    assert summary.left_out_items and "<th>no answer from</th>" in listed
    first = summary.left_out_items[0]
    assert f"<td>{first.conversation_id}</td>" in listed and "synthetic outage" in listed
    positions = section(page, "turn-position")
    row = summary.diagnostics.turn_position[0]
    assert "n per bin:" in positions and f"{row.level} {row.n}" in positions


def test_markdown_leaderboard_has_a_row_per_model_and_escapes_pipes(
    summary: Summary, hostile_name: str
) -> None:
    text = render_markdown(summary)
    # the summary, a table per task, then the claims, the judge audit and the warnings
    assert text.count("\n## ") == len(summary.tasks) + 5
    for heading in ("At a glance", "Rank agreement between tasks", "Judge audit", "Warnings"):
        assert f"\n## {heading}\n" in text
    assert hostile_name.replace("|", "\\|") in text
    for model in ("m/model0", "m/model1", "m/model2", "baseline/random"):
        assert text.count(f"| {model} |") == len(summary.tasks)


def test_one_conversation_shows_no_interval_and_no_verdict_and_says_why() -> None:
    accuracy = {f"m/model{i}": {t: 0.2 + 0.15 * i for t in TASKS} for i in range(4)}
    plan = Plan(
        accuracy,
        conversations=1,
        items_per_conversation=8,
        variants=("blind", "informed"),
        informed_gain=2.0,
        judge_accuracy=0.8,
    )
    summary = build_summary(synthetic.runs(plan), Options(resamples=200, permutations=99))
    page = render_html(summary)
    for words in VERDICTS:
        assert words not in page, words
    assert not INTERVAL.search(page)
    # each number says on how few conversations it rests (its own items', the run's here)
    why = re.compile(
        r"only 1 conversation( with [a-z ]+)? \(fewer than 10\): no interval and no verdict"
    )
    for name in ("rank-correlation", "leaderboard", "context-modes", "warnings"):
        assert why.search(section(page, name)), name
    text = render_markdown(summary)
    assert not INTERVAL.search(text) and why.search(text)


def test_sim_models_are_named_in_the_banner() -> None:
    plan = Plan({"sim/oracle": {"emotion": 0.6}, "m/a": {"emotion": 0.5}}, conversations=6)
    summary = build_summary(synthetic.runs(plan), Options(resamples=100, permutations=99))
    line = "simulated models (sim/oracle): test instruments, not models"
    assert line in summary.provenance.banner
    assert line in render_html(summary)
    assert not any(r.subject for r in summary.scores if r.model == "sim/oracle")
    included = build_summary(
        synthetic.runs(plan), Options(resamples=100, permutations=99, include_simulated=True)
    )
    assert all(r.subject for r in included.scores if r.model == "sim/oracle")


def test_write_report_writes_the_requested_files(summary: Summary, tmp_path: Path) -> None:
    html = write_report(summary, tmp_path / "html")
    assert sorted(p.name for p in html) == ["report.html", "summary.json"]
    markdown = write_report(summary, tmp_path / "md", "markdown")
    assert sorted(p.name for p in markdown) == ["leaderboard.md", "summary.json"]
    only = write_report(summary, tmp_path / "json", "json")
    assert [p.name for p in only] == ["summary.json"]
    assert (tmp_path / "html" / "report.html").stat().st_mode & 0o044  # readable by others
