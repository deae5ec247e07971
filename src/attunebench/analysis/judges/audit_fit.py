"""How far a model's audited replies may be from its judged ones, and what that does to the
judges' correction.

The correction (`analysis.judges.corrected`) is exact only if the judges err on the audited
replies as on the judged ones. The judges' shift between the two sets (`judge_shift`) widens
the corrected interval each side by the largest shift the audit cannot exclude; an audit whose
shift's interval reaches past `NOISE_LIMIT` withholds the correction. Hedges' g (Hedges 1981)
of log length and of the judges' win describe the two sets. docs/report.md gives the reasoning.
"""

from __future__ import annotations

import numpy as np

from attunebench.analysis.frame import FloatArray
from attunebench.analysis.schema import AuditFit, Estimate

NOISE_LIMIT = 0.10
LENGTH_NOTED = 0.25  # |g| of log length above which the widening's sentence names it


def hedges_g(audited: FloatArray, judged: FloatArray) -> float | None:
    """Hedges' g of `audited` against `judged`; None with fewer than two of either or with
    neither spread nor difference, infinite with a difference and no spread."""
    n_a, n_j = len(audited), len(judged)
    if n_a < 2 or n_j < 2:
        return None
    pooled = ((n_a - 1) * audited.var(ddof=1) + (n_j - 1) * judged.var(ddof=1)) / (n_a + n_j - 2)
    shift = float(audited.mean() - judged.mean())
    if pooled <= 0:
        return None if shift == 0 else float(np.sign(shift) * np.inf)
    return shift / float(np.sqrt(pooled)) * (1.0 - 3.0 / (4.0 * (n_a + n_j) - 9.0))


def _length_clause(audited: FloatArray, judged: FloatArray) -> str:
    ratio = float(np.exp(audited.mean() - judged.mean()))
    if ratio < 1:
        return f"the audited replies are {1 - ratio:.0%} shorter than the judged ones"
    return f"the audited replies are {ratio - 1:.0%} longer than the judged ones"


def _shift_clause(shift: Estimate, audited: FloatArray, judged: FloatArray) -> str:
    """What the audit says of the judges' shift: clear of zero, with its direction, or not."""
    low, high = shift.ci_low or 0.0, shift.ci_high or 0.0
    if low > 0.0 or high < 0.0:
        way = "higher" if audited.mean() > judged.mean() else "lower"
        return (
            f"the judges score the audited replies {way} than the judged ones (a win rate of "
            f"{audited.mean():.2f} against {judged.mean():.2f}), and how much of that people "
            "share is unknown"
        )
    return (
        f"the audit cannot exclude a shift of {max(abs(low), abs(high)):.2f} between the judges' "
        "win rate on the audited replies and on the judged ones"
    )


def _too_small(shift: Estimate, pairs: int) -> str | None:
    """Why the audit is too small to correct with (None: it is not)."""
    if shift.value is None or shift.ci_low is None or shift.ci_high is None:
        why = shift.reason or "the judges' shift has no interval"
        return f"not corrected: the audit of {pairs} pairs is too small to correct ({why})"
    noise = max(shift.value - shift.ci_low, shift.ci_high - shift.value)
    if noise <= NOISE_LIMIT:
        return None
    return (
        f"not corrected: the audit of {pairs} pairs is too small to correct (it knows the "
        f"judges' shift between its replies and the judged ones only to +-{noise:.2f})"
    )


def audit_fit(
    lengths: tuple[FloatArray, FloatArray], wins: tuple[FloatArray, FloatArray], shift: Estimate
) -> AuditFit:
    """The audited replies against the judged ones (`lengths` and the judges' `wins`, each
    (audited, judged); `shift`, the judges' shift between them): withhold, or widen and why."""
    log_a, log_j = (np.log(np.maximum(side, 1.0)) for side in lengths)
    length, judge = hedges_g(log_a, log_j), hedges_g(*wins)
    withheld = _too_small(shift, len(wins[0]))
    widened_by = widened = None
    if withheld is None:
        assert shift.ci_low is not None and shift.ci_high is not None  # `_too_small` saw them
        widened_by = max(abs(shift.ci_low), abs(shift.ci_high))
        clauses = [_shift_clause(shift, *wins)]
        if length is not None and abs(length) > LENGTH_NOTED:
            clauses.append(_length_clause(log_a, log_j))
        widened = f"widened by {widened_by:.2f} each side: {'; '.join(clauses)}"
    return AuditFit(
        length_effect=_finite(length),
        judge_effect=_finite(judge),
        judge_shift=shift,
        noise_limit=NOISE_LIMIT,
        widened_by=widened_by,
        widened=widened,
        withheld=withheld,
    )


def widen(corrected: Estimate, fit: AuditFit | None) -> Estimate:
    """The corrected score as the audit allows: withheld, or its interval widened within 0 and 1."""
    if fit is None or corrected.value is None:
        return corrected
    if fit.withheld is not None:
        return Estimate(reason=fit.withheld)
    if corrected.ci_low is None or corrected.ci_high is None or fit.widened_by is None:
        return corrected
    low, high = corrected.ci_low - fit.widened_by, corrected.ci_high + fit.widened_by
    return Estimate(
        value=corrected.value, ci_low=max(0.0, low), ci_high=min(1.0, high), reason=fit.widened
    )


def _finite(effect: float | None) -> float | None:
    """An effect for JSON: a difference with no spread on either side has no size."""
    return None if effect is None or np.isinf(effect) else effect
