"""Can the judge be trusted? Its agreement with the participants' own picks.

The `judge_audit` task's declared metrics (`tasks.helpers.audit`) per judge and variant
(`informed`, `blind`), each with its interval from the shared resamples.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.cells import Cell, task_object
from attunebench.analysis.frame import Frame
from attunebench.analysis.provenance import Roster
from attunebench.analysis.schema import Estimate, JudgeAgreement
from attunebench.analysis.scores import MetricScores, metric_scores
from attunebench.tasks.helpers.audit import UNDEFINED

# The statistics of `tasks.helpers.audit`, as the schema lists them.
ESTIMATES = tuple(k for k, f in JudgeAgreement.model_fields.items() if f.annotation is Estimate)


def audits_judges(task: str) -> bool:
    """Whether a task's evaluated "models" are judges (the judge audit), by its declaration."""
    declaration = task_object(task)
    return declaration is not None and declaration.evaluates == "judges"


def _estimate(found: MetricScores | None, m: int, name: str, too_few: str | None) -> Estimate:
    """One statistic of judge `m`, null with the reason where it is not read or undefined."""
    if found is None:
        return Estimate(reason=UNDEFINED.get(name))
    if np.isnan(found.point[m]):
        return Estimate(reason=UNDEFINED.get(name, "undefined"))
    return Estimate.of(found.point[m], found.low[m], found.high[m], few=too_few)


def judge_agreement(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    roster: Roster,
    cells: Mapping[tuple[str, str], Cell],
    minimum: Minimum,
) -> list[JudgeAgreement]:
    out = []
    for (task, variant), cell in sorted(cells.items()):
        if not audits_judges(task):
            continue
        scores = {s.metric: s for s in metric_scores(frame, bootstrap, cell)}
        if "score" in scores:
            scores["accuracy"] = scores.pop("score")
        for m in np.unique(frame.model[frame.cell(task, variant)]):
            mine = frame.cell(task, variant) & (frame.model == m)
            used = cell.mask & (frame.model == m)
            derived = [bool(cell.views[int(i)].gold.derived) for i in np.flatnonzero(used)]
            too_few = minimum.of(frame.conversation[used])
            estimates = {name: _estimate(scores.get(name), m, name, too_few) for name in ESTIMATES}
            judge = frame.models[m]
            out.append(
                JudgeAgreement(
                    judge=judge,
                    judge_kind=roster.kind(judge),
                    variant=variant,
                    n=int(used.sum()),
                    n_failed=int((mine & ~frame.scored).sum()),
                    n_conversations=int(np.unique(frame.conversation[used]).size),
                    derived_share=sum(derived) / len(derived) if derived else None,
                    **estimates,
                )
            )
    return out
