"""What the charts show: one colour per model across the whole report, labels that fit."""

from __future__ import annotations

from xml.etree import ElementTree as ET

from attunebench.analysis import Summary
from attunebench.analysis.schema import ScoreRow
from attunebench.report import svg, views

NS = {"svg": "http://www.w3.org/2000/svg"}
SVG = "{http://www.w3.org/2000/svg}"


def legend(chart: str) -> dict[str, str]:
    """Label -> colour, from a line chart's key."""
    out = {}
    for key in ET.fromstring(chart).findall("svg:g[@class='key']", NS):
        rect = key.find("svg:rect", NS)
        assert rect is not None
        out[key.findtext("svg:text", "", NS)] = rect.get("fill", "")
    return out


def test_a_model_keeps_its_colour_in_a_panel_that_lacks_another_model(summary: Summary) -> None:
    groups = summary.diagnostics.turn_position
    first = min(g.model for g in groups)
    # drop the alphabetically first model from one task only: the rest must not shift colour
    task = sorted({g.task for g in groups})[-1]
    kept = [g for g in groups if not (g.task == task and g.model == first)]
    panels = views.binned_panels(summary, kept, ("early", "middle", "late"))
    keys = [legend(panel.chart) for panel in panels]
    assert len(panels) > 1 and any(len(k) < max(len(k) for k in keys) for k in keys)
    seen: dict[str, set[str]] = {}
    for key in keys:
        for label, colour in key.items():
            seen.setdefault(label, set()).add(colour)
    assert all(len(colours) == 1 for colours in seen.values()), seen
    assert len({next(iter(c)) for c in seen.values()}) == len(seen)  # and models differ


def test_leaderboard_dots_use_the_same_colours_as_the_line_charts(summary: Summary) -> None:
    colours = views.model_colours(summary)
    board = views.leaderboards(summary)[0]
    fills = [c.get("fill") for c in ET.fromstring(board.chart).iter(f"{SVG}circle")]
    scored = [r.model for r in board.rows if r.value is not None]
    assert fills == [colours[m] for m in scored]


def test_forest_makes_room_for_long_labels_and_notes() -> None:
    label, note = "x" * 60, "  sep 67% of pairs apart"
    chart = svg.forest([svg.Interval(label, 3.2, None, None, note)], "t")
    root = ET.fromstring(chart)
    width = float(root.get("width", "0"))
    texts = {t.text: float(t.get("x", "0")) for t in root.iter(f"{SVG}text")}
    assert texts[label] >= svg.CHAR_WIDTH * len(label)  # right-aligned there: starts past 0
    value = "3.200" + note
    assert texts[value] + svg.CHAR_WIDTH * len(value) <= width


def test_a_single_judges_own_metrics_are_not_repeated(summary: Summary) -> None:
    info = next(t for t in summary.tasks if t.judges)
    assert len(info.judges) == 1 and any(f"[{info.judges[0]}]" in r.metric for r in summary.scores)
    board = next(b for b in views.leaderboards(summary) if b.task == info.name)
    metrics = [metric for metric, _ in board.secondary]
    assert metrics and not any("[" in m for m in metrics)


def test_a_model_missing_from_a_panel_is_named_under_it(summary: Summary) -> None:
    groups = summary.diagnostics.turn_position
    gone = max(g.model for g in groups)
    task = min(g.task for g in groups)
    kept = [g for g in groups if not (g.task == task and g.model == gone)]
    panels = {p.title: p for p in views.binned_panels(summary, kept, ("early", "middle", "late"))}
    assert gone in panels[task].note
    assert all(not p.note for name, p in panels.items() if name != task)


def headline_row(
    model: str,
    kind: str,
    value: float,
    interval: tuple[float, float] | None = None,
) -> ScoreRow:
    low, high = interval or (value - 0.05, value + 0.05)
    return ScoreRow(
        model=model,
        model_kind=kind,
        task="rating",
        variant="blind",
        metric="position_adjusted_r",
        headline=True,
        value=value,
        ci_low=low,
        ci_high=high,
        n=100,
        n_conversations=20,
        n_invalid=0,
        n_failed=0,
        subject=kind == "model",
        fit="cross-fitted" if kind == "reference" else None,
    )


def test_the_leaderboard_says_no_model_beats_the_references_only_where_intervals_show_it() -> None:
    references = [
        headline_row("reference/constant", "reference", 0.0, (0.0, 0.0)),
        headline_row("reference/length-only", "reference", 0.3, (0.25, 0.35)),
    ]
    behind = [*references, headline_row("m/a", "model", 0.05, (0.0, 0.1))]
    (note,) = views.reference_notes(behind)
    assert "reference/length-only (0.300, cross-fitted)" in note
    assert "no model under test beats the references" in note
    # the intervals overlap: no verdict either way
    overlapping = [*references, headline_row("m/a", "model", 0.2, (0.1, 0.3))]
    assert views.reference_notes(overlapping) == []
    assert views.reference_notes([*references, headline_row("m/a", "model", 0.5)]) == []
    # a baseline above the references is not a model under test
    assert views.reference_notes([*behind, headline_row("baseline/knn", "baseline", 0.6)])
    # a reference not known to be fitted out of sample never counts (a summary written before
    # rows said how), nor one without an interval
    seen = headline_row("reference/length-only", "reference", 0.3, (0.25, 0.35))
    unknown = seen.model_copy(update={"fit": None})
    assert views.reference_notes([unknown, headline_row("m/a", "model", 0.05, (0.0, 0.1))]) == []
    unsure = headline_row("reference/length-only", "reference", 0.3).model_copy(
        update={"ci_low": None, "ci_high": None}
    )
    assert views.reference_notes([unsure, headline_row("m/a", "model", 0.05, (0.0, 0.1))]) == []
