"""Response win rates corrected by the participants' own picks (prediction-powered inference).

    corrected = mean_N(judge) - mean_n(judge - participant)

on the audit pairs holding the model's replies (Angelopoulos et al. 2023, Science 382(6671)),
both sets resampled together, and widened or withheld by `analysis.judges.audit_fit`. Whether
the judges may stand in for the participants is an equivalence rule on the bias (Calderon,
Reichart & Dror 2025), within +-`STAND_IN_MARGIN`; docs/report.md gives the reasoning.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.frame import FloatArray, Frame, IntArray, headline_variant
from attunebench.analysis.judges.audit_fit import audit_fit, widen
from attunebench.analysis.judges.length_control import length_controlled
from attunebench.analysis.judges.panel import Units, audited, judged_units
from attunebench.analysis.judges.verdict_table import FIRST, NONE, VerdictTable, win_for
from attunebench.analysis.schema import (
    AuditFit,
    CorrectedScore,
    Estimate,
    JudgeBias,
    JudgeCorrected,
    Notice,
)
from attunebench.analysis.sums import estimate, mean

STAND_IN_MARGIN = 0.05


def fit_of(
    table: VerdictTable,
    model: str,
    audit: Units,
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
    judge: int | None = None,
) -> AuditFit | None:
    """The audited replies against the judged ones (`analysis.judges.audit_fit`), the judges' shift
    between them resampled by conversation; None where either set is empty."""
    judged = judged_units(table, model, judge)
    if len(audit.judged) == 0 or len(judged.judged) == 0:
        return None
    shift = corrected_estimate(
        bootstrap, minimum, judged.judged, judged.where, audit.judged, audit.where
    )
    return audit_fit((audit.length, judged.length), (audit.judged, judged.judged), shift)


def _combined(sums: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = sums[..., 0] / sums[..., 1] - sums[..., 2] / sums[..., 3]
    return out


def corrected_estimate(
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
    scores: FloatArray,
    score_conversations: IntArray,
    rectifier: FloatArray,
    rectifier_conversations: IntArray,
    unaudited: str = "no audited pairs",
) -> Estimate:
    """mean(scores) - mean(rectifier), both resampled by conversation together."""
    n, m = len(scores), len(rectifier)
    values = np.zeros((n + m, 4))
    values[:n, 0], values[:n, 1] = scores, 1.0
    values[n:, 2], values[n:, 3] = rectifier, 1.0
    where = np.concatenate([score_conversations, rectifier_conversations])
    if n == 0 or m == 0:
        return Estimate(reason="no judged items" if n == 0 else unaudited)
    return estimate(bootstrap, minimum, values, where, _combined, "undefined")


def stands_in(bias: Estimate) -> str:
    if bias.ci_low is None or bias.ci_high is None:
        return "cannot tell"
    if bias.ci_low >= -STAND_IN_MARGIN and bias.ci_high <= STAND_IN_MARGIN:
        return "yes"
    return "no" if bias.ci_low > 0.0 or bias.ci_high < 0.0 else "cannot tell"


def by_judge(
    table: VerdictTable,
    model: str,
    bootstrap: ClusterBootstrap,
    minimum: Minimum,
    none: str,
) -> dict[str, JudgeCorrected]:
    """Each judge alone: its win rate for the model's replies (an unusable verdict a loss),
    corrected by its own error on the audited pairs and widened or withheld by its own shift."""
    out = {}
    subject = np.array([s == model for s in table.subject], dtype=bool)
    for j, name in enumerate(table.judges):
        rows = subject & (table.judge == j)
        wins = np.where(table.pick[rows] == NONE, 0.0, win_for(table.pick[rows], FIRST))
        where = table.conversation[rows]
        audit = audited(table, model, j)
        error = audit.judged - audit.people
        corrected = corrected_estimate(bootstrap, minimum, wins, where, error, audit.where, none)
        fit = fit_of(table, model, audit, bootstrap, minimum, j)
        out[name] = JudgeCorrected(
            judge=mean(bootstrap, minimum, wins, where, "no verdict on its replies"),
            corrected=widen(corrected, fit),
            bias=mean(bootstrap, minimum, error, audit.where, none),
        )
    return out


def response_corrected(
    frame: Frame, table: VerdictTable, bootstrap: ClusterBootstrap, minimum: Minimum
) -> dict[str, CorrectedScore]:
    if not table.judged_tasks:
        return {}
    task = table.judged_tasks[0]  # the task whose answers the judges score (response)
    variant = headline_variant(frame.task_variants(task))
    if variant is None:  # only person-hidden twins: no headline to correct
        return {}
    cell = frame.cell(task, variant) & frame.scored
    out = {}
    for m in np.unique(frame.model[cell]):
        model = frame.models[int(m)]
        mine = cell & (frame.model == m)
        scores, where = frame.score[mine], frame.conversation[mine]
        audit = audited(table, model)
        error = audit.judged - audit.people
        none = f"no audit pair has a reply by {model} (the data's Response.model names none)"
        bias = mean(bootstrap, minimum, error, audit.where, none)
        fit = fit_of(table, model, audit, bootstrap, minimum)
        corrected = corrected_estimate(bootstrap, minimum, scores, where, error, audit.where, none)
        out[model] = CorrectedScore(
            judge=mean(bootstrap, minimum, scores, where, "no judged items"),
            corrected=widen(corrected, fit),
            participants=mean(bootstrap, minimum, audit.people, audit.where, none),
            length_controlled=length_controlled(table, model, bootstrap, minimum),
            bias=bias,
            stands_in=stands_in(bias),
            n_judged=int(mine.sum()),
            n_audited=len(audit.judged),
            by_judge=by_judge(table, model, bootstrap, minimum, none),
            audit_fit=fit,
        )
    return out


def judge_notices(
    biases: Mapping[str, JudgeBias], corrected: Mapping[str, CorrectedScore], task: str
) -> list[Notice]:
    """A warning for each judge favouring its own model or family, each withheld correction, and
    each model whose judges' win rate is clearly off the participants' own."""
    out = [
        Notice(kind="judge_self_preference", model=found.model, message=found.statement)
        for bias in biases.values()
        for found in bias.self_preference
        if found.statement is not None
    ]
    for model, row in corrected.items():
        withheld = row.audit_fit.withheld if row.audit_fit is not None else None
        if withheld is not None:
            message = f"{task}: {model}: {withheld}; its score is the judges' own"
            out.append(Notice(kind="correction_withheld", task=task, model=model, message=message))
        if row.stands_in == "no" and row.corrected.value is not None:
            message = (
                f"{task}: the judges' win rate for {model} is off the participants' own on its "
                f"audited pairs (by {row.bias.value:+.2f}); read its corrected score "
                f"({row.corrected.value:.2f}), not the judges' ({row.judge.value:.2f})"
            )
            kind = "judges_off_participants"
            out.append(Notice(kind=kind, task=task, model=model, message=message))
    return out
