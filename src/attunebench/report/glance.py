"""The report at a glance: who leads each task, how close the leader comes to the people's own
ceiling, whether the tasks rank models alike, and which task separates them best. Every line
says why, wherever its figure is not computed."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from attunebench.analysis.references.ceiling import ABOVE
from attunebench.analysis.schema import Lead, ScoreRow, Summary


@dataclass(frozen=True)
class Line:
    """One statement of the summary: what it is about, and what the data says (or why not)."""

    topic: str
    text: str
    missing: bool = False  # no figure: `text` is the reason
    beside: str = ""  # a yardstick shown beside the models (never ranked)


@dataclass(frozen=True)
class Glance:
    nobody: str | None  # why nothing is ranked at all; said once, above the lines
    leads: list[Line]
    pairs: list[Line]
    separation: list[Line]
    ceilings: list[Line] = field(default_factory=list)


def _range(low: float | None, high: float | None, digits: int = 3) -> str:
    return "" if low is None or high is None else f" [{low:.{digits}f}, {high:.{digits}f}]"


def _best_yardstick(summary: Summary, task: str) -> ScoreRow | None:
    rows = [
        r
        for r in summary.scores
        if r.task == task and r.headline and not r.subject and r.value is not None
    ]
    return max(rows, key=lambda r: r.value or 0.0, default=None)


def lead_line(summary: Summary, lead: Lead, nobody: str | None) -> Line:
    """`task (headline)`: `A 0.61, +0.12 [0.03, 0.21] over B: ahead`, the best yardstick
    beside it. With no model under test at all, the reason is said once above."""
    best = _best_yardstick(summary, lead.task)
    beside = ""
    if best is not None:
        beside = f"best yardstick: {best.model} {best.value:.3f}{_range(best.ci_low, best.ci_high)}"
        if lead.leader_value is not None and (best.value or 0.0) > lead.leader_value:
            beside += ", above every model under test"
    info = next((t for t in summary.tasks if t.name == lead.task), None)
    topic = lead.task if info is None else f"{lead.task} ({info.headline})"
    if lead.leader is None:
        why = "no model under test" if nobody else lead.reason
        return Line(topic, f"no leader: {why}", True, beside)
    head = f"{lead.leader} {lead.leader_value:.3f}"
    if lead.runner_up is None or lead.value is None:
        return Line(topic, f"{head}; {lead.reason}", True, beside)
    margin = f"{head}, {lead.value:+.3f}{_range(lead.ci_low, lead.ci_high)} over {lead.runner_up}"
    if lead.verdict is None:
        return Line(topic, f"{margin} ({lead.reason})", True, beside)
    return Line(topic, f"{margin}: {lead.verdict}", beside=beside)


def ceiling_line(summary: Summary, lead: Lead) -> Line:
    """`task`: the people's own ceiling and the leader's share of the way from chance to it; "not
    measured" where no question of the task was asked again (never 1.0)."""
    found = summary.self_consistency.get(lead.task)
    if found is None:
        why = "no question of this task was asked again (retest probes)"
        return Line(lead.task, f"not measured: {why}", missing=True)
    if found.value is None:
        return Line(lead.task, f"not computed: {found.reason}", missing=True)
    text = f"ceiling {found.value:.3f}{_range(found.ci_low, found.ci_high)}"
    beside = "" if found.chance is None else f"chance {found.chance:.3f}"
    part = summary.share_of_ceiling.get(lead.task, {}).get(lead.leader or "")
    if part is None:
        return Line(lead.task, text, beside=beside)
    if part.value is None:
        return Line(lead.task, f"{text}; {lead.leader}: {part.reason}", beside=beside)
    reached = f"{lead.leader} {part.value:.2f}{_range(part.ci_low, part.ci_high, 2)}"
    if part.value > 1.0:
        return Line(lead.task, f"{text}; {reached}: {ABOVE}", beside=beside)
    return Line(lead.task, f"{text}; {reached} of the way from chance to it", beside=beside)


def pair_lines(summary: Summary, nobody: str | None) -> list[Line]:
    """Each pair's verdict, the pairs grouped by it; the section below gives their figures."""
    pairs = summary.rank_correlation.pairs
    if not pairs:
        why = summary.rank_correlation.reason or "fewer than 2 tasks"
        return [Line("task pairs", f"not computed: {why}", missing=True)]
    grouped: dict[tuple[bool, str], list[str]] = defaultdict(list)
    for p in pairs:
        why = "no verdict: no model under test" if nobody else p.verdict_text
        key = (False, p.verdict) if p.verdict is not None else (True, why)
        grouped[key].append(f"{p.task_a} / {p.task_b}")
    order = {"distinct": 0, "agree": 1, "cannot tell": 2}
    lines = []
    for (missing, text), names in sorted(grouped.items(), key=lambda g: order.get(g[0][1], 3)):
        if missing:
            lines.append(Line(f"{len(names)} of {len(pairs)} pairs", text, missing=True))
        else:
            lines.append(Line(f"{text} ({len(names)} of {len(pairs)})", ", ".join(names)))
    return lines


def separation_lines(summary: Summary, nobody: str | None) -> list[Line]:
    """Which task separates the models best, per conversation and per item."""
    tasks = summary.discriminability.tasks
    reasons = sorted({d.snr.reason or d.reason or "" for d in tasks} - {""})
    why = "no model under test" if nobody else "; ".join(reasons) or "no task with scores"
    said: dict[str, str | None] = {"per conversation": None, "per item": None}
    best = next((d for d in tasks if d.rank == 1), None)
    if best is not None:
        snr, needed = best.snr, best.conversations_needed
        said["per conversation"] = (
            f"{best.task}: signal/noise {snr.value:.3f}{_range(snr.ci_low, snr.ci_high)}, "
            f"{'∞' if needed is None else needed} conversations needed"
        )
    per_item = [d for d in tasks if (d.snr_per_item or 0.0) > 0]
    best = max(per_item, key=lambda d: d.snr_per_item or 0.0, default=None)
    if best is not None:
        needed = best.items_needed
        said["per item"] = (
            f"{best.task}: signal/noise {best.snr_per_item:.3f}, "
            f"{'∞' if needed is None else needed} items needed"
        )
    return [
        Line(topic, text) if text else Line(topic, f"not computed: {why}", missing=True)
        for topic, text in said.items()
    ]


def glance(summary: Summary) -> Glance:
    subjects = any(r.subject for r in summary.scores)
    nobody = None
    if not subjects:
        nobody = next((lead.reason for lead in summary.leads if lead.reason), "no model under test")
    return Glance(
        nobody=nobody,
        leads=[lead_line(summary, lead, nobody) for lead in summary.leads],
        pairs=pair_lines(summary, nobody),
        separation=separation_lines(summary, nobody),
        ceilings=[ceiling_line(summary, lead) for lead in summary.leads],
    )
