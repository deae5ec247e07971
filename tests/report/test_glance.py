"""The summary at the top of both formats, yardsticks shown but never numbered, and the
wording that used to mislead: a count of 0 conversations, actor gold called the participant's."""

from __future__ import annotations

import re

from markupsafe import escape

from attunebench.analysis import Options, Summary, build_summary
from attunebench.analysis.schema import SuiteInfo
from attunebench.report import render_html, render_markdown
from attunebench.report.glance import glance
from planted import synthetic
from planted.synthetic import Plan


def section(page: str, section_id: str) -> str:
    start = page.index(f'<section id="{section_id}">')
    return page[start : page.index("</section>", start)]


def test_the_summary_comes_first_and_names_each_leader(summary: Summary) -> None:
    page = render_html(summary)
    assert page.index('<section id="glance">') < page.index("<nav>")
    top = section(page, "glance")
    for lead in summary.leads:
        assert lead.leader is not None and lead.leader.startswith("m/")  # never the baseline
        assert str(escape(f"{lead.leader} {lead.leader_value:.3f}")) in top
    for pair in summary.rank_correlation.pairs:
        assert f"{pair.task_a} / {pair.task_b}" in top
    assert "per conversation" in top and "per item" in top
    strong = summary.model_copy(
        update={
            "scores": [
                r.model_copy(update={"value": 0.99}) if r.model == "baseline/random" else r
                for r in summary.scores
            ]
        }
    )
    assert all("above every model under test" in line.beside for line in glance(strong).leads)
    text = render_markdown(summary)
    assert text.index("## At a glance") < text.index("## behavior")


def test_yardsticks_are_shown_but_never_numbered(summary: Summary) -> None:
    board = section(render_html(summary), "leaderboard")
    numbers = re.findall(r'<tr><td class="num">(\d*)</td><td>([^<]+)', board)
    per_task = len(summary.tasks)
    assert [n for n, model in numbers if model.strip() == "baseline/random"] == [""] * per_task
    subjects = {r.model for r in summary.scores if r.subject}
    ranked = [int(n) for n, model in numbers if model.strip() in subjects]
    assert ranked and sorted(set(ranked)) == list(range(1, len(subjects) + 1))
    for line in render_markdown(summary).splitlines():
        if line.startswith("|  | baseline/random |"):
            break
    else:
        raise AssertionError("the baseline's markdown row has a rank")
    profile = section(render_html(summary), "profile")
    ranked_cells = [r for r in summary.scores if r.headline and r.subject and r.value is not None]
    assert "baseline/random (baseline)" in profile
    assert profile.count("(#") == len(ranked_cells)


def test_with_no_model_under_test_every_line_says_why_and_what_to_add() -> None:
    both = {"emotion": 0.6, "preference": 0.6}
    plan = Plan(
        {"baseline/a": both, "baseline/b": both, "baseline/c": both},
        conversations=20,
        kinds={"baseline/a": "baseline", "baseline/b": "baseline", "baseline/c": "baseline"},
    )
    summary = build_summary(synthetic.runs(plan), Options(resamples=100, permutations=99))
    seen = glance(summary)
    assert seen.nobody is not None and "--include-simulated" in seen.nobody
    assert all(line.missing for line in [*seen.leads, *seen.pairs, *seen.separation])
    assert all("best yardstick" in line.beside for line in seen.leads)
    for text in (render_html(summary), render_markdown(summary)):
        assert "only 0 conversations" not in text
        assert "--include-simulated" in text
    (pair,) = summary.rank_correlation.pairs
    assert "(0)" in pair.verdict_text and "--include-simulated" in pair.verdict_text


def test_worst_items_name_who_gave_the_gold(summary: Summary) -> None:
    worst = section(render_html(summary), "worst-items")
    assert "participant&#39;s gold" not in worst and "participant's gold" not in worst
    assert "gold, given by simulated:" in worst
    actor = summary.model_copy(
        update={"tasks": [t.model_copy(update={"provenance": ["actor"]}) for t in summary.tasks]}
    )
    assert "gold, given by actor:" in section(render_html(actor), "worst-items")


def test_the_markdown_carries_the_judge_audit_and_the_rank_agreement(summary: Summary) -> None:
    text = render_markdown(summary)
    audit = text[text.index("## Judge audit") :]
    (judge,) = {j.judge for j in summary.judge_agreement}
    assert judge in audit and "| accuracy |" in audit and "| flip rate |" in audit
    assert f"{summary.judge_agreement[0].accuracy.value:.3f}" in audit
    ranks = text[text.index("## Rank agreement between tasks") :]
    for pair in summary.rank_correlation.pairs:
        assert f"| {pair.task_a} / {pair.task_b} |" in ranks


def test_a_yardstick_at_a_glance_carries_its_interval(summary: Summary) -> None:
    for line in glance(summary).leads:
        assert re.fullmatch(
            r"best yardstick: \S+ -?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\].*", line.beside
        ), line.beside


def test_a_suite_runs_report_names_the_suite_at_the_top(summary: Summary) -> None:
    assert "<h1>AttuneBench report</h1>" in render_html(summary)  # no suite: as before
    suite = SuiteInfo(name="open-v1-mini", version="2", digest="a" * 64)
    runs = [run.model_copy(update={"suite": suite}) for run in summary.provenance.runs]
    on_suite = summary.model_copy(
        update={"provenance": summary.provenance.model_copy(update={"runs": runs})}
    )
    page = render_html(on_suite)
    assert "<h1>AttuneBench report: suite open-v1-mini</h1>" in page
    top = page[: page.index('<section id="glance">')]
    assert "version 2 (digest <code>aaaaaaaaaaaa</code>)" in top
