"""Simulated studies of the judges' win rate corrected by people's picks: how often a correction
is given, and how often, where given, its interval holds the people's true win rate.

Each study holds a model's judged replies (300, five in each of 60 conversations) and its
audited pairs (200, five a conversation; 30, three a conversation, in `small_audit`), each
reply against another. A reply has a quality (a normal shift shared by its conversation, plus
its own) and a length (log-normal, around 400 characters). A person picks the model's reply
with probability expit(1.5 x the quality difference); a judge, in each of two orders, with
expit(0.8 x the quality difference + `verbosity` x the log-length difference): it sees
quality, less sharply than people do, so its error depends on how good the replies are. The
truth is the people's win rate on the judged replies (Gauss-Hermite quadrature).

Scenarios (`SCENARIOS`): `same` (audited and judged replies from one population),
`audited_better` (the audited replies better by 1.5 standard deviations of quality: the ones
people were shown), `audited_slightly_better` (by 0.6, where the judges' g is near a quarter of
a standard deviation), `verbosity_bias` (a judge that favours length, the judged replies twice
as long as the audited ones), `small_audit` (one population, 30 audited pairs). Corrected as if
the audited replies were the judged ones (`check=False`), the correction's interval holds the
truth in about 60% of `audited_better`'s studies and 22% of `verbosity_bias`'s; widened by the
shift the audit cannot exclude, in at least 99.8% of the studies given one in every scenario,
and withheld, too small, in 98% of `small_audit`'s (docs/report.md gives the figures). The
verdict table, the shift, the widening, the correction and its interval are the analysis's own
(`analysis.judges.corrected`, `analysis.judges.audit_fit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from scipy.special import expit

from attunebench.analysis.bootstrap import DEFAULT_RESAMPLES, ClusterBootstrap, Minimum
from attunebench.analysis.judges.audit_fit import widen
from attunebench.analysis.judges.corrected import corrected_estimate, fit_of
from attunebench.analysis.judges.panel import audited, judged_units
from attunebench.analysis.judges.verdict_table import AUDIT, FIRST, JUDGED, SECOND, table_of

MODEL, OTHER = "model", "other"
PEOPLE_SLOPE, JUDGE_SLOPE = 1.5, 0.8
MODEL_QUALITY = 0.3  # the judged model's replies against the others
CONVERSATION_SPREAD, REPLY_SPREAD = 0.5, 0.85
LOG_LENGTH, LENGTH_SPREAD = np.log(400.0), 0.5
QUADRATURE_POINTS = 80


@dataclass(frozen=True)
class Scenario:
    audited_pairs: int = 200
    per_conversation: int = 5
    audited_better: float = 0.0  # quality shift of the audited replies
    verbosity: float = 0.0  # the judge's gain per unit of log-length difference
    judged_longer: float = 0.0  # log-length shift of the judged replies


SCENARIOS = {
    "same": Scenario(),
    "audited_better": Scenario(audited_better=1.5),
    "audited_slightly_better": Scenario(audited_better=0.6),
    "verbosity_bias": Scenario(verbosity=1.0, judged_longer=np.log(2.0)),
    "small_audit": Scenario(audited_pairs=30, per_conversation=3),
}
JUDGED_ITEMS, JUDGED_PER_CONVERSATION = 300, 5


@cache
def truth() -> float:
    """The people's win rate on the judged replies: E[expit(1.5 (q - q_other))]."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(QUADRATURE_POINTS)
    spread = np.sqrt(CONVERSATION_SPREAD**2 + REPLY_SPREAD**2 + 1.0)
    values = expit(PEOPLE_SLOPE * (MODEL_QUALITY + spread * nodes))
    return float((weights * values).sum() / weights.sum())


def _replies(
    rng: np.random.Generator, n: int, per_conversation: int, quality: float, longer: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quality, log length and conversation of `n` replies (and the others they face)."""
    conversation = np.arange(n) // per_conversation
    shared = rng.normal(0.0, CONVERSATION_SPREAD, conversation.max() + 1)[conversation]
    own = quality + shared + rng.normal(0.0, REPLY_SPREAD, n)
    difference = own - rng.normal(0.0, 1.0, n)
    length = rng.normal(LOG_LENGTH + longer, LENGTH_SPREAD, n)
    other = rng.normal(LOG_LENGTH, LENGTH_SPREAD, n)
    return difference, np.stack([length, other], axis=1), conversation


def _rows(
    rng: np.random.Generator, scenario: Scenario, kind: str, n: int, per: int, offset: int
) -> tuple[list[tuple[Any, ...]], list[int]]:
    """Verdict-table rows (both orders) of `n` comparisons of the model's reply with another,
    from conversation `offset` on."""
    audit = kind == AUDIT
    quality = MODEL_QUALITY + (scenario.audited_better if audit else 0.0)
    longer = 0.0 if audit else scenario.judged_longer
    difference, lengths, conversation = _replies(rng, n, per, quality, longer)
    judge = JUDGE_SLOPE * difference + scenario.verbosity * (lengths[:, 0] - lengths[:, 1])
    person = np.where(rng.random(n) < expit(PEOPLE_SLOPE * difference), FIRST, SECOND)
    picks = np.where(rng.random((n, 2)) < expit(judge)[:, None], FIRST, SECOND).tolist()
    chars = np.exp(lengths).round().tolist()
    authors = (MODEL, OTHER if audit else None)
    rows: list[tuple[Any, ...]] = []
    where: list[int] = []
    for i in range(n):
        truth_of = int(person[i]) if audit else -1
        for order in (0, 1):
            pick, lengths_of = picks[i][order], tuple(chars[i])
            rows.append(
                ("j", kind, "informed", (kind, i), order, pick, truth_of, lengths_of, authors)
            )
            where.append(offset + int(conversation[i]))
    return rows, where


@dataclass(frozen=True)
class Outcome:
    given: bool
    covered: bool
    widened_by: float = 0.0


def study(
    scenario: Scenario, rng: np.random.Generator, resamples: int, check: bool = True
) -> Outcome:
    """One study: whether a correction is given, and whether its interval holds the truth
    (`check=False`: corrected as if the audited replies were the judged ones, neither widened
    nor withheld, to see what the audit's check protects against)."""
    judged, judged_where = _rows(rng, scenario, JUDGED, JUDGED_ITEMS, JUDGED_PER_CONVERSATION, 0)
    first_audit = max(judged_where) + 1
    pairs, per = scenario.audited_pairs, scenario.per_conversation
    audit, audit_where = _rows(rng, scenario, AUDIT, pairs, per, first_audit)
    table = table_of(judged + audit, judged_where + audit_where, (JUDGED,))
    found, scored = audited(table, MODEL), judged_units(table, MODEL)
    codes = np.arange(max(audit_where) + 1)
    bootstrap = ClusterBootstrap.create(codes, resamples, rng)
    minimum = Minimum(10, "conversation", codes)
    error = found.judged - found.people
    corrected = corrected_estimate(
        bootstrap, minimum, scored.judged, scored.where, error, found.where
    )
    fit = fit_of(table, MODEL, found, bootstrap, minimum) if check else None
    corrected = widen(corrected, fit)
    if corrected.value is None:
        return Outcome(False, False)
    low, high, goal = corrected.ci_low, corrected.ci_high, truth()
    covered = low is not None and high is not None and low <= goal <= high
    return Outcome(True, covered, 0.0 if fit is None else fit.widened_by or 0.0)


@dataclass(frozen=True)
class Share:
    corrected_share: float
    coverage: float | None  # over the studies given a correction; None where none was
    widened_by: float | None  # the median widening of the studies given one


def scenarios(
    names: tuple[str, ...] = tuple(SCENARIOS),
    *,
    studies: int = 1000,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Share]:
    """Scenario -> the share of studies given a correction, and its coverage where given."""
    out = {}
    for k, name in enumerate(names):
        rng = np.random.default_rng(np.random.SeedSequence([seed, k]))
        found = [study(SCENARIOS[name], rng, resamples) for _ in range(studies)]
        given = [o for o in found if o.given]
        coverage = float(np.mean([o.covered for o in given])) if given else None
        widening = float(np.median([o.widened_by for o in given])) if given else None
        out[name] = Share(len(given) / studies, coverage, widening)
    return out
