"""Render a `Summary` as one self-contained HTML page or a markdown leaderboard, and write them.

The page has no script and fetches nothing: styles are inline and charts are inline SVG, so it
opens offline and shows the same thing everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from attunebench.analysis.breakdowns.diagnostics import INTENSITIES, POSITIONS
from attunebench.analysis.judges.audit import ESTIMATES
from attunebench.analysis.schema import Summary
from attunebench.analysis.summary import summary_json
from attunebench.data.jsonl import atomic_writer
from attunebench.report import views
from attunebench.report.differences import computed_from, difference_lines
from attunebench.report.environment import make_environment
from attunebench.report.glance import glance

Format = Literal["html", "markdown", "json"]
SECTIONS = (
    ("overview", "Overview"),
    ("leaderboard", "Leaderboard"),
    ("differences", "Model differences"),
    ("profile", "Capability profile"),
    ("rank-correlation", "Rank agreement between tasks"),
    ("discriminability", "Discriminability"),
    ("context-modes", "Context modes"),
    ("judge-audit", "Judge audit"),
    ("judge-panel", "Judge panel and bias"),
    ("corrected", "Response scores corrected by people"),
    ("calibration", "Calibration"),
    ("turn-position", "Turn position"),
    ("intensity", "Emotion intensity"),
    ("subgroups", "Subgroups"),
    ("labels", "Labels"),
    ("worst-items", "Worst items"),
    ("left-out", "Items left out"),
    ("warnings", "Warnings"),
)
# Open when the page loads: the sections a reader needs first, short enough to take in. The
# others fold (the summary line shows their title) and open with a click.
# Model differences open too where a pair was asked for (`report --compare`); the simulator
# rollouts, where there are some.
UNFOLDED = frozenset({"leaderboard", "rollouts", "profile", "rank-correlation", "discriminability"})
# After the model differences, only where the runs hold a simulator run once per seed.
ROLLOUTS = ("rollouts", "Simulator rollouts")


def sections(summary: Summary) -> list[tuple[str, str]]:
    """The page's sections, in order: the rollouts' only where there are some."""
    found = list(SECTIONS)
    if summary.rollouts:
        found.insert(found.index(("differences", "Model differences")) + 1, ROLLOUTS)
    return found


def gold_givers(summary: Summary) -> dict[str, str]:
    """Per task, who gave its gold, as the worst items and labels name it."""
    return {t.name: ", ".join(t.provenance) or "undeclared" for t in summary.tasks}


def _shared(summary: Summary, boards: list[views.Leaderboard]) -> dict[str, object]:
    """What the page and the markdown leaderboard both show."""
    return {
        "s": summary,
        "boards": boards,
        "differences": difference_lines(summary, gold_givers(summary)),
        "differences_from": computed_from(summary),
        "kinds": views.kind_labels(summary),
        "labelled": views.labelled,
        "glance": glance(summary),
        "judge_statistics": ESTIMATES,
    }


def render_html(summary: Summary) -> str:
    boards = views.leaderboards(summary)
    details = summary.diagnostics
    return (
        make_environment()
        .get_template("report.html")
        .render(
            **_shared(summary, boards),
            sections=sections(summary),
            unfolded=UNFOLDED | {"differences"} if summary.differences else UNFOLDED,
            gold_by=gold_givers(summary),
            profile=views.profile(summary, boards),
            correlation=views.correlation_chart(summary),
            discriminability=views.discriminability_chart(summary),
            contexts=views.context_panels(summary),
            positions=views.binned_panels(summary, details.turn_position, POSITIONS),
            intensities=views.binned_panels(summary, details.intensity, INTENSITIES),
            subgroups=views.grouped(details.subgroups),
            calibration=views.calibration_panels(summary),
        )
    )


def render_markdown(summary: Summary) -> str:
    shared = _shared(summary, views.leaderboards(summary))
    return make_environment().get_template("leaderboard.md").render(**shared)


def write_report(summary: Summary, out: str | Path, fmt: Format = "html") -> list[Path]:
    """Write summary.json, plus report.html or leaderboard.md; returns the files written."""
    root = Path(out)
    written = [root / "summary.json"]
    with atomic_writer(written[0]) as handle:
        handle.write(summary_json(summary))
    if fmt != "json":
        name = "report.html" if fmt == "html" else "leaderboard.md"
        text = render_html(summary) if fmt == "html" else render_markdown(summary)
        with atomic_writer(root / name) as handle:
            handle.write(text)
        written.append(root / name)
    for path in written:
        path.chmod(0o644)  # a report is for reading: not the private mode of a temporary file
    return written
