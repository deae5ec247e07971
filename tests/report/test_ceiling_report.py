"""The people's own ceiling in the report: a line on each task's chart with its band, a line in
the at-a-glance box with the leader's share of the way from chance, a share column; and where
no question was asked again, "not measured", never a ceiling of 1.0."""

from __future__ import annotations

import re

import pytest

from attunebench.analysis import Options, Summary, build_summary
from attunebench.report import render_html, render_markdown
from attunebench.report.glance import glance
from attunebench.report.views import leaderboards
from attunebench.tasks import load_tasks
from planted import retest_study

MODELS = {"m/like-people": 0.2, "m/at-chance": None}


def section(page: str, section_id: str) -> str:
    start = page.index(f'<section id="{section_id}">')
    return page[start : page.index("</section>", start)]


@pytest.fixture(scope="module")
def probed() -> Summary:
    registry = load_tasks()
    tasks = [registry.get(name)() for name in ("emotion", "preference")]
    plan = retest_study.Plan(conversations=40, turns=3, noise=0.2)
    return build_summary(retest_study.runs(plan, tasks, MODELS), Options(resamples=200))


def glance_leader(summary: Summary, task: str) -> str:
    (lead,) = [lead for lead in summary.leads if lead.task == task]
    assert lead.leader is not None
    return lead.leader


def test_each_ceiling_is_drawn_said_and_shared(probed: Summary) -> None:
    page = render_html(probed)
    for board in leaderboards(probed):
        found = probed.self_consistency[board.task]
        assert found.value is not None and found.chance is not None
        chart = str(board.chart)
        assert f"ceiling {found.value:.2f}" in chart and f"chance {found.chance:.2f}" in chart
        assert chart.count("<rect") == 1  # the ceiling's interval, as a band
        assert any(
            note.startswith(f"the people's own ceiling: {found.value:.3f}") for note in board.notes
        )
        for model, share in probed.share_of_ceiling[board.task].items():
            assert share.value is not None
            assert f"{share.value:.3f}" in section(page, "leaderboard"), model
    top = section(page, "glance")
    assert "How close to the people&#39;s own ceiling?" in top
    for line in glance(probed).ceilings:
        found = probed.self_consistency[line.topic]
        assert line.text.startswith(f"ceiling {found.value:.3f} [") and not line.missing
        part = probed.share_of_ceiling[line.topic][glance_leader(probed, line.topic)]
        assert part.value is not None
        said = "above the people's own consistency" if part.value > 1 else "of the way from chance"
        assert said in line.text
    text = render_markdown(probed)
    assert "How close to the people's own ceiling?" in text and "share of the ceiling" in text


def test_without_probes_every_ceiling_is_not_measured_never_one(summary: Summary) -> None:
    assert summary.self_consistency == {} and summary.share_of_ceiling == {}
    page = render_html(summary)
    for board in leaderboards(summary):
        assert "ceiling" not in str(board.chart)
        assert any("ceiling: not measured" in note for note in board.notes)
    lines = glance(summary).ceilings
    assert lines and all(line.missing and line.text.startswith("not measured") for line in lines)
    assert "share of the ceiling" not in section(page, "leaderboard").split("</details>", 1)[1]
    assert not re.search(r"ceiling:? 1\.0", page + render_markdown(summary))
