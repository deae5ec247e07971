"""Whether a model's audited replies look, to a judge, like its judged ones.

The participants' picks correct the judges' win rate (`analysis.corrected`) only if the judges
err on the audited replies as they do on the judged ones. The audited replies can come from
another population: another prompt or version of the model, another corpus, or the replies
people happened to be shown. So before correcting, the audited replies are compared with the
judged ones on the two things a judge is known to react to:

- length: judges favour longer replies (Dubois et al. 2024, "Length-controlled AlpacaEval";
  Li et al. 2024, "Does style matter?"); compared on the log of the characters;
- the judge's own scores: its win rate for the model's reply per comparison (the panel's
  majority in each order, averaged), which moves when the replies are better or worse.

Each is a standardised mean difference, Hedges' g (Cohen's d with the pooled standard
deviation, times the small-sample factor 1 - 3 / (4 (n_a + n_j) - 9); Hedges 1981, Journal of
Educational Statistics 6(2)). Where either is larger than `FIT_THRESHOLD` (a quarter of a
standard deviation, just above what Cohen 1988 calls a small effect) in size, the corrected
score is withheld with the reason in one sentence, and the judges' own score stays. With 200
audited pairs and 300 judged replies from one population, g's own noise (a standard
deviation of about 0.09) crosses it in about 2% of studies; a half-standard-deviation shift
crosses it in nearly all (`analysis.ppi_studies`). A shift near the threshold passes now and
then, and the correction is then off by what the shift does to the judges' error.
"""

from __future__ import annotations

import numpy as np

from attunebench.analysis.frame import FloatArray
from attunebench.analysis.schema import AuditFit

FIT_THRESHOLD = 0.25


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


def _length_sentence(audited: FloatArray, judged: FloatArray) -> str:
    ratio = float(np.exp(audited.mean() - judged.mean()))
    if ratio < 1:
        return f"the audited replies are {1 - ratio:.0%} shorter than the judged ones"
    return f"the audited replies are {ratio - 1:.0%} longer than the judged ones"


def _judge_sentence(audited: FloatArray, judged: FloatArray) -> str:
    way = "higher" if audited.mean() > judged.mean() else "lower"
    return (
        f"the judges score the audited replies {way} than the judged ones (a win rate of "
        f"{audited.mean():.2f} against {judged.mean():.2f})"
    )


def audit_fit(
    audited_lengths: FloatArray,
    judged_lengths: FloatArray,
    audited_wins: FloatArray,
    judged_wins: FloatArray,
) -> AuditFit:
    """The two effect sizes, and the reason to withhold the correction (None to give it).
    Lengths are characters (a reply of none counts as one); wins are per comparison."""
    log_a = np.log(np.maximum(audited_lengths, 1.0))
    log_j = np.log(np.maximum(judged_lengths, 1.0))
    length = hedges_g(log_a, log_j)
    judge = hedges_g(audited_wins, judged_wins)
    reasons = []
    if length is not None and abs(length) > FIT_THRESHOLD:
        reasons.append(_length_sentence(log_a, log_j))
    if judge is not None and abs(judge) > FIT_THRESHOLD:
        reasons.append(_judge_sentence(audited_wins, judged_wins))
    withheld = None
    if reasons:
        withheld = f"not corrected: {' and '.join(reasons)}"
    return AuditFit(
        length_effect=_finite(length),
        judge_effect=_finite(judge),
        threshold=FIT_THRESHOLD,
        withheld=withheld,
    )


def _finite(effect: float | None) -> float | None:
    """An effect for JSON: a difference with no spread on either side has no size."""
    return None if effect is None or np.isinf(effect) else effect
