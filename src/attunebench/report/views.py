"""What each report section shows, prepared from a `Summary` for the templates.

Everything here is plain data (and SVG markup built by `svg`); the templates only lay it out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup

from attunebench.analysis.schema import (
    Difference,
    Estimate,
    GroupScore,
    PersonGap,
    ScoreRow,
    SelfConsistency,
    Summary,
    TaskInfo,
)
from attunebench.report import svg
from attunebench.tasks.helpers.twins import is_person_hidden


@dataclass(frozen=True)
class Leaderboard:
    task: str
    metric: str
    variant: str
    notes: list[str]
    rows: list[ScoreRow]
    chart: Markup
    # metric -> the row of each model of `rows`, in their order (None: no value there)
    secondary: list[tuple[str, list[ScoreRow | None]]]
    ranks: dict[str, int]  # models under test only: yardsticks are shown, never numbered
    gaps: dict[str, PersonGap] = field(default_factory=dict)  # model -> its person gap
    gap_statements: list[str] = field(default_factory=list)
    ceiling: SelfConsistency | None = None  # the people's own (None: not measured)
    shares: dict[str, Estimate] = field(default_factory=dict)


@dataclass(frozen=True)
class Panel:
    """A titled chart with the rows it shows."""

    title: str
    chart: Markup
    rows: list[GroupScore] = field(default_factory=list)
    note: str = ""


def kind_labels(summary: Summary) -> dict[str, str]:
    return {e.name: e.kind for e in [*summary.provenance.models, *summary.provenance.judges]}


def model_colours(summary: Summary) -> dict[str, str]:
    """Each model's colour in every chart of the report, from the sorted list of all models."""
    details = summary.diagnostics
    names = {e.name for e in summary.provenance.models} | {r.model for r in summary.scores}
    names |= {d.model for d in summary.context_modes}
    names |= {a.judge for a in summary.judge_agreement}
    names |= {c.model for c in summary.diagnostics.calibration}
    names |= {g.model for g in [*details.turn_position, *details.intensity]}
    return svg.colours(names)


def labelled(name: str, kinds: dict[str, str]) -> str:
    """A model or judge as reports show it: `name (proxy)`, `name (mock)`, `name (baseline)`."""
    kind = kinds.get(name, "model")
    return name if kind == "model" else f"{name} ({kind})"


def task_notes(info: TaskInfo, kinds: dict[str, str]) -> list[str]:
    notes = []
    if info.provenance:
        notes.append("gold given by: " + ", ".join(info.provenance))
    if info.gold_levels:
        parts = ", ".join(f"{n} {level}-level" for level, n in info.gold_levels.items())
        notes.append(f"gold: {parts} (conversation-level labels are not turn-by-turn)")
    if info.derived_share:
        notes.append(f"{info.derived_share:.0%} of pairs are derived from ratings, not picks")
    if info.judges:
        notes.append("judged by " + ", ".join(labelled(j, kinds) for j in info.judges))
    modes = [variant for variant in info.variants if not is_person_hidden(variant)]
    if len(modes) > 1:
        notes.append(
            f"context modes: {', '.join(modes)}; the headline uses {info.headline_variant}"
        )
    if len(modes) < len(info.variants):
        notes.append(
            "also asked with the person's own words hidden (person-hidden twins): the person "
            "gap is the headline with them shown minus with them hidden, on the same items"
        )
    if info.left_out_items:
        notes.append(f"{info.left_out_items} items not answered by every model are left out")
    for reason, count in info.left_out.items():
        notes.append(f"{count} {reason} left out")
    return notes


OUT_OF_SAMPLE = ("train", "cross-fitted", "none")  # a reference that never saw its answers


def reference_notes(rows: Sequence[ScoreRow]) -> list[str]:
    """Whether no model under test beats the references, said only where every model's interval
    lies wholly below some out-of-sample reference's (one fitted in sample saw the answers)."""
    references = [
        r
        for r in rows
        if r.model_kind == "reference" and r.fit in OUT_OF_SAMPLE and r.ci_low is not None
    ]
    subjects = [r for r in rows if r.subject and r.value is not None]
    if not references or not subjects:
        return []
    for subject in subjects:
        high = subject.ci_high
        if high is None or not any((r.ci_low or 0.0) > high for r in references):
            return []
    best = max(references, key=lambda r: r.value or 0.0)
    return [
        f"no model under test beats the references: {best.model} ({best.value:.3f}, "
        f"{best.fit}) lies above every model's interval on the headline"
    ]


NOT_MEASURED = "not measured (no question of this task was asked again: retest probes)"


def ceiling_text(found: SelfConsistency | None) -> str:
    """The people's own ceiling on a task's headline, in words: never 1.0 where unmeasured."""
    if found is None:
        return f"the people's own ceiling: {NOT_MEASURED}"
    if found.value is None:
        return f"the people's own ceiling: not computed ({found.reason})"
    span = "" if found.ci_low is None else f" [{found.ci_low:.3f}, {found.ci_high:.3f}]"
    why = f" ({found.reason})" if found.reason else ""
    chance = "" if found.chance is None else f"; chance {found.chance:.3f}"
    return (
        f"the people's own ceiling: {found.value:.3f}{span}{why}, their repeat answers against "
        f"their first ({found.n} repeats in {found.n_conversations} conversations){chance}"
    )


def ceiling_marks(found: SelfConsistency | None) -> list[svg.Mark]:
    """The ceiling (with its interval) and chance as lines across a task's chart."""
    if found is None or found.value is None:
        return []
    marks = [svg.Mark(f"ceiling {found.value:.2f}", found.value, found.ci_low, found.ci_high)]
    if found.chance is not None:
        marks.append(svg.Mark(f"chance {found.chance:.2f}", found.chance, dash="4,3"))
    return marks


def _interval(
    row: ScoreRow | Difference, kinds: dict[str, str], colours: dict[str, str], note: str = ""
) -> svg.Interval:
    return svg.Interval(
        labelled(row.model, kinds), row.value, row.ci_low, row.ci_high, note, colours[row.model]
    )


def leaderboards(summary: Summary) -> list[Leaderboard]:
    kinds, colours = kind_labels(summary), model_colours(summary)
    out = []
    for info in summary.tasks:
        mine = [
            r for r in summary.scores if r.task == info.name and r.variant == info.headline_variant
        ]
        rows = sorted(
            (r for r in mine if r.headline),
            key=lambda r: (r.value is None, -(r.value or 0.0), r.model),
        )
        ranks = {r.model: i for i, r in enumerate((r for r in rows if r.subject), 1)}
        by_metric: dict[str, dict[str, ScoreRow]] = defaultdict(dict)
        for r in mine:
            # with one judge, its own `metric[judge]` is the pooled `metric` again: shown once
            repeats = len(info.judges) == 1 and r.metric.endswith(f"[{info.judges[0]}]")
            if not r.headline and not repeats:
                by_metric[r.metric][r.model] = r
        secondary = [(m, [found.get(r.model) for r in rows]) for m, found in by_metric.items()]
        ceiling = summary.self_consistency.get(info.name)
        chart = svg.forest(
            [_interval(r, kinds, colours, f" ({r.reason})" if r.reason else "") for r in rows],
            f"{info.name}: {info.headline}",
            marks=ceiling_marks(ceiling),
        )
        notes = [*task_notes(info, kinds), *reference_notes(rows), ceiling_text(ceiling)]
        gaps = summary.person_gap.get(info.name, {})
        out.append(
            Leaderboard(
                info.name,
                info.headline,
                info.headline_variant,
                notes,
                rows,
                chart,
                secondary,
                ranks,
                gaps,
                [gap.statement for gap in gaps.values() if gap.statement],
                ceiling,
                dict(summary.share_of_ceiling.get(info.name, {})),
            )
        )
    return out


def profile(summary: Summary, boards: Sequence[Leaderboard]) -> Markup | None:
    """Models x tasks: each cell the model's score, and its rank on that task among the models
    under test (a yardstick's cell has no rank)."""
    kinds = kind_labels(summary)
    models = sorted({r.model for b in boards for r in b.rows})
    if not models or not boards:
        return None
    cells = []
    for model in models:
        line: list[tuple[float | None, str]] = []
        for board in boards:
            rank = board.ranks.get(model)
            row = next((r for r in board.rows if r.model == model), None)
            value = row.value if row is not None else None
            shown = "—" if value is None else f"{value:.2f}"
            line.append((value, shown if rank is None or value is None else f"{shown} (#{rank})"))
        cells.append(line)
    title = "Capability profile: score per task (rank among models under test)"
    names = [labelled(m, kinds) for m in models]
    return svg.heatmap(names, [b.task for b in boards], cells, title, colour="sequential")


def correlation_chart(summary: Summary) -> Markup | None:
    correlation = summary.rank_correlation
    if len(correlation.tasks) < 2:
        return None
    cells = [[_correlation_cell(c) for c in line] for line in correlation.kendall_tau_b]
    return svg.heatmap(
        correlation.tasks, correlation.tasks, cells, "Kendall tau-b between tasks' model rankings"
    )


def _correlation_cell(found: Estimate) -> svg.Cell:
    if found.value is None:
        return None, "—"
    low, high = found.ci_low, found.ci_high
    span = "" if low is None or high is None else f"[{low:.2f},{high:.2f}]"
    return found.value, f"{found.value:.2f} {span}"


def discriminability_chart(summary: Summary) -> Markup | None:
    entries = [d for d in summary.discriminability.tasks if d.snr.value is not None]
    if not entries:
        return None
    rows = [
        svg.Interval(
            d.task,
            d.snr.value,
            d.snr.ci_low,
            d.snr.ci_high,
            f"  needs {d.conversations_needed or '∞'} conversations",
        )
        for d in entries
    ]
    return svg.forest(rows, "Signal to noise per task (higher separates models better)")


def context_panels(summary: Summary) -> list[Panel]:
    kinds, colours = kind_labels(summary), model_colours(summary)
    by_task: dict[str, list[svg.Interval]] = defaultdict(list)
    for d in summary.context_modes:
        if d.verdict is None:
            continue  # a model that ignores context, or too few conversations to say
        by_task[d.task].append(_interval(d, kinds, colours))
    return [
        Panel(f"{task}: informed minus blind", svg.forest(rows, task, zero=True))
        for task, rows in sorted(by_task.items())
    ]


def binned_panels(
    summary: Summary, groups: Iterable[GroupScore], categories: Sequence[str]
) -> list[Panel]:
    """One chart per task: a line per model across the bins, in the model's report colour."""
    kinds, colours = kind_labels(summary), model_colours(summary)
    by_task: dict[str, list[GroupScore]] = defaultdict(list)
    for g in groups:
        by_task[g.task].append(g)
    panels = []
    for task, rows in sorted(by_task.items()):
        present = [c for c in categories if any(r.level == c for r in rows)]
        lines = []
        for model in sorted({r.model for r in rows}):
            at = {r.level: r for r in rows if r.model == model}
            points = [
                svg.Interval(c, at[c].value, at[c].ci_low, at[c].ci_high)
                if c in at
                else svg.Interval(c, None, None, None)
                for c in present
            ]
            lines.append(svg.Line(labelled(model, kinds), colours[model], points))
        # a model with no scored item in any bin has no line: say so rather than leave it out
        # reference rows are scored from the gold alone: never binned, so never missing
        scored = {r.model for r in summary.scores if r.task == task and r.model_kind != "reference"}
        absent = sorted(scored - {r.model for r in rows})
        note = ", ".join(labelled(m, kinds) for m in absent)
        note = f"not drawn, no scored item in any bin: {note}" if note else ""
        panels.append(Panel(task, svg.series(present, lines, task), rows, note))
    return panels


def grouped(rows: Iterable[GroupScore]) -> list[tuple[str, str, list[GroupScore]]]:
    """(task, field, rows) for the subgroup tables."""
    by_key: dict[tuple[str, str], list[GroupScore]] = defaultdict(list)
    for r in rows:
        by_key[r.task, r.group].append(r)
    return [
        (task, name, sorted(rs, key=lambda r: (r.level, r.model)))
        for (task, name), rs in sorted(by_key.items())
    ]


def calibration_panels(summary: Summary) -> list[Panel]:
    """One reliability diagram per task, a curve per model that answered by choice."""
    kinds, colours = kind_labels(summary), model_colours(summary)
    by_task: dict[str, list[svg.Curve]] = defaultdict(list)
    for curve in summary.diagnostics.calibration:
        points = [(b.confidence, b.accuracy, b.n) for b in curve.bins]
        colour = colours.get(curve.model, svg.NEUTRAL)
        by_task[curve.task].append(svg.Curve(labelled(curve.model, kinds), colour, points))
    return [
        Panel(task, svg.reliability(curves, f"{task}: reliability of choice probabilities"))
        for task, curves in sorted(by_task.items())
    ]
