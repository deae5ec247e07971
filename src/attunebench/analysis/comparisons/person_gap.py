"""The person gap: how much of a model's headline comes from reading the person's own words.

Tasks run with person-hidden twins (`tasks.helpers.twins`): both sides are weighted by the same
resample counts, so the interval is the paired one. An interval that covers 0 is no evidence
that the model reads the person. Every model gets one, yardsticks too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum, clusters_in
from attunebench.analysis.cells import Cell
from attunebench.analysis.frame import Frame, IntArray
from attunebench.analysis.provenance import Roster
from attunebench.analysis.schema import Estimate, Notice, PersonGap
from attunebench.analysis.scores import cell_headline, metric_values
from attunebench.kinds import ModelKind
from attunebench.stats import none_if_nan
from attunebench.tasks.helpers.metrics import Metric
from attunebench.tasks.helpers.twins import hidden_variant

Cells = Mapping[tuple[str, str], Cell]


def person_gaps(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    cells: Cells,
    headline_of: Mapping[str, str],
    roster: Roster,
    minimum: Minimum,
) -> dict[str, dict[str, PersonGap]]:
    """Per task with twins of its headline variant, per model in both: its person gap."""
    out: dict[str, dict[str, PersonGap]] = {}
    for task, variant in sorted(headline_of.items()):
        shown, twins = cells[task, variant], cells.get((task, hidden_variant(variant)))
        if twins is None:  # before the metrics are listed: that reads every record of the cell
            continue
        metric = cell_headline(shown, frame)
        if metric is None:
            continue
        found = out[task] = {}
        for m in np.intersect1d(frame.model[shown.mask], frame.model[twins.mask]).tolist():
            name = frame.models[m]
            gap = _gap(frame, bootstrap, (shown, twins), metric, m, minimum, roster.kind(name))
            found[name] = gap.model_copy(update={"statement": statement(name, task, gap)})
    return out


def twins_alone(
    frame: Frame, headline_of: Mapping[str, str], audits: Callable[[str], bool]
) -> list[Notice]:
    """A warning for each task run with its person-hidden twins alone: a twin is never a
    headline, so such a task has none and no person gap (its rows are shown, as a variant)."""
    return [
        Notice(
            kind="person_hidden_only",
            task=task,
            message=f"{task}: only person-hidden twins were run, so there is no headline and no "
            "person gap; run --person both (or add a run of the shown items)",
        )
        for task in frame.tasks
        if task not in headline_of and not audits(task)
    ]


def paired_rows(
    left: IntArray, right: IntArray, item: Callable[[int], Any]
) -> tuple[IntArray, IntArray]:
    """Of two sides' records, those of the items on both (`item`: a record's item, by which
    both sides are ordered), side by side."""
    mine = [{item(i): i for i in rows.tolist()} for rows in (left, right)]
    both = sorted(mine[0].keys() & mine[1].keys())
    return (
        np.array([mine[0][key] for key in both], dtype=np.int64),
        np.array([mine[1][key] for key in both], dtype=np.int64),
    )


def _gap(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    pair: tuple[Cell, Cell],
    metric: Metric,
    model: int,
    minimum: Minimum,
    kind: ModelKind,
) -> PersonGap:
    shown, twins = pair
    rows, twin_rows = paired_rows(
        shown.rows(frame, model), twins.rows(frame, model), frame.item.__getitem__
    )
    conversations = frame.conversation[rows]
    found = PersonGap(
        reason="no item answered both with the person's words shown and hidden",
        model_kind=kind,
        variant=shown.variant,
        metric=metric.name,
        n=len(rows),
        n_conversations=int(np.unique(conversations).size),
    )
    if len(rows) == 0:
        return found
    weights = bootstrap.weights(conversations)  # one resample weighs an item and its twin alike
    full, full_drawn = metric.evaluate_values(metric_values(frame, shown, metric, rows), weights)
    hidden, hidden_drawn = metric.evaluate_values(
        metric_values(frame, twins, metric, twin_rows), weights
    )
    sides = {"shown": none_if_nan(full), "hidden": none_if_nan(hidden)}
    if np.isnan(full) or np.isnan(hidden):
        undefined = " and ".join(side for side, value in sides.items() if value is None)
        return found.model_copy(
            update={**sides, "reason": f"the headline is undefined on these items ({undefined})"}
        )
    clusters = clusters_in(bootstrap.cluster_of, conversations)
    low, high = bootstrap.interval((full_drawn - hidden_drawn).reshape(-1, 1), clusters)
    too_few = minimum.of(conversations, " with items answered both ways")
    gap = Estimate.of(full - hidden, low[0], high[0], few=too_few)
    return found.model_copy(update={**sides, **gap.model_dump()})


def statement(model: str, task: str, gap: PersonGap) -> str | None:
    """The gap in words, where it has an interval: whether the model reads the person."""
    value, low, high = gap.value, gap.ci_low, gap.ci_high
    if value is None or low is None or high is None or gap.shown is None or gap.hidden is None:
        return None
    gap_text = f"a gap of {value:+.3f} [{low:+.3f}, {high:+.3f}]"
    sides = f"{gap.metric} {gap.shown:.3f} with their own words, {gap.hidden:.3f} without"
    if low > 0:
        return f"{model} reads the person on {task}: {sides}, {gap_text}"
    if high < 0:
        hidden = "with the person's own words hidden"
        return f"{model} scores higher on {task} {hidden}: {sides}, {gap_text}"
    return f"no evidence that {model} reads the person on {task}: {sides}, {gap_text}"
