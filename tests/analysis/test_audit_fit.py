"""The judges' correction by people's picks, given only where the audited replies are like the
judged ones (`analysis.audit_fit`, `analysis.corrected`), against planted populations
(`analysis.ppi_studies`)."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from attunebench.analysis import ppi_studies
from attunebench.analysis.audit_fit import FIT_THRESHOLD, audit_fit, hedges_g
from attunebench.analysis.corrected import judge_notices
from attunebench.analysis.schema import AuditFit, CorrectedScore, Estimate


def test_hedges_g_is_the_pooled_standardised_difference_with_its_small_sample_factor() -> None:
    a, b = np.array([3.0, 5.0, 4.0, 6.0]), np.array([1.0, 2.0, 3.0, 2.0, 2.0])
    pooled = ((3 * statistics.variance(a)) + (4 * statistics.variance(b))) / 7
    cohen = (statistics.mean(a) - statistics.mean(b)) / pooled**0.5
    assert hedges_g(a, b) == pytest.approx(cohen * (1 - 3 / (4 * 9 - 9)))
    assert hedges_g(a[:1], b) is None
    assert hedges_g(np.ones(3), np.ones(3)) is None  # no spread, no difference: no size


def test_shorter_audited_replies_withhold_the_correction_in_one_sentence() -> None:
    rng = np.random.default_rng(0)
    judged = np.exp(rng.normal(np.log(500), 0.3, 300))
    audited = 0.6 * np.exp(rng.normal(np.log(500), 0.3, 100))
    wins = (np.arange(400) % 2).astype(float)  # the judges score both alike
    found = audit_fit(audited, judged, wins[:100], wins[100:])
    assert found.length_effect is not None and found.length_effect < -FIT_THRESHOLD
    assert (
        found.withheld == "not corrected: the audited replies are 40% shorter than the judged ones"
    )
    same = audit_fit(judged[:100] * 1.01, judged[100:], wins[:100], wins[100:])
    assert same.withheld is None and abs(same.length_effect or 0.0) < FIT_THRESHOLD


def test_judges_scoring_the_audited_replies_higher_withhold_it() -> None:
    rng = np.random.default_rng(1)
    lengths = np.full(200, 400.0) + rng.normal(0, 20, 200)
    audited_wins, judged_wins = (rng.random(100) < 0.75) * 1.0, (rng.random(100) < 0.45) * 1.0
    found = audit_fit(lengths[:100], lengths[100:], audited_wins, judged_wins)
    assert found.judge_effect is not None and found.judge_effect > FIT_THRESHOLD
    assert found.withheld is not None and "score the audited replies higher" in found.withheld


def test_planted_populations_get_a_correction_only_where_it_covers() -> None:
    # the audit's four scenarios, 120 studies each (1,000 in benchmarks/validity.py); where a
    # correction is given it must cover (nominal 95%, bound 85% for 120 studies' noise), and
    # one population must get it
    found = ppi_studies.scenarios(studies=120, resamples=400, seed=1)
    assert found["same"].corrected_share >= 0.9
    for name, share in found.items():
        assert share.coverage is None or share.coverage >= 0.85, (name, share)
    # the trap: without the check both shifted populations are corrected, and badly
    assert found["audited_better"].corrected_share <= 0.02
    assert found["verbosity_bias"].corrected_share <= 0.02
    assert found["small_audit"].corrected_share > 0.3  # noisier, withheld more often


def test_without_the_check_the_shifted_populations_miss_the_truth() -> None:
    rng = np.random.default_rng(2)
    missed = 0
    for _ in range(40):
        outcome = ppi_studies.study(ppi_studies.SCENARIOS["verbosity_bias"], rng, 300, check=False)
        missed += not outcome.covered
    assert missed >= 20  # covers in about a fifth of studies: the check is what protects it


def test_a_withheld_correction_is_a_warning_with_its_reason() -> None:
    shown = Estimate(value=0.6, ci_low=0.5, ci_high=0.7)
    reason = "not corrected: the audited replies are 40% shorter than the judged ones"
    fit = AuditFit(length_effect=-1.2, judge_effect=0.1, threshold=FIT_THRESHOLD, withheld=reason)
    row = CorrectedScore(
        judge=shown,
        corrected=Estimate(value=None, reason=reason),
        participants=shown,
        length_controlled=shown,
        bias=shown,
        stands_in="no",
        n_judged=40,
        n_audited=12,
        audit_fit=fit,
    )
    (notice,) = judge_notices({}, {"m": row}, "response")
    assert notice.kind == "correction_withheld" and notice.model == "m"
    assert reason in notice.message  # and no "read its corrected score", which is withheld
