"""The judges' correction by people's picks, widened by the shift between the audited and the
judged replies that the audit cannot exclude, and withheld where the audit is too small to bound
it (`analysis.judges.audit_fit`, `analysis.judges.corrected`), against planted populations
(`planted.ppi_studies`)."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from attunebench.analysis.judges.audit_fit import NOISE_LIMIT, audit_fit, hedges_g, widen
from attunebench.analysis.judges.corrected import judge_notices
from attunebench.analysis.schema import AuditFit, CorrectedScore, Estimate
from planted import ppi_studies


def test_hedges_g_is_the_pooled_standardised_difference_with_its_small_sample_factor() -> None:
    a, b = np.array([3.0, 5.0, 4.0, 6.0]), np.array([1.0, 2.0, 3.0, 2.0, 2.0])
    pooled = ((3 * statistics.variance(a)) + (4 * statistics.variance(b))) / 7
    cohen = (statistics.mean(a) - statistics.mean(b)) / pooled**0.5
    assert hedges_g(a, b) == pytest.approx(cohen * (1 - 3 / (4 * 9 - 9)))
    assert hedges_g(a[:1], b) is None
    assert hedges_g(np.ones(3), np.ones(3)) is None  # no spread, no difference: no size


def _shift(value: float, noise: float) -> Estimate:
    return Estimate(value=value, ci_low=value - noise, ci_high=value + noise)


def test_a_shift_widens_the_correction_by_its_far_end_and_says_why() -> None:
    # planted: the judges score the audited replies 0.20 higher, known to within 0.05; the
    # correction is widened by 0.25 each side (never withheld for the shift itself)
    rng = np.random.default_rng(0)
    lengths = np.exp(rng.normal(np.log(500), 0.3, 400))
    audited_wins, judged_wins = np.r_[np.ones(70), np.zeros(30)], np.r_[np.ones(50), np.zeros(50)]
    found = audit_fit(
        (lengths[:100], lengths[100:]), (audited_wins, judged_wins), _shift(-0.2, 0.05)
    )
    assert found.withheld is None and found.widened_by == pytest.approx(0.25)
    assert found.widened == (
        "widened by 0.25 each side: the judges score the audited replies higher than the judged "
        "ones (a win rate of 0.70 against 0.50), and how much of that people share is unknown"
    )
    corrected = widen(Estimate(value=0.6, ci_low=0.5, ci_high=0.7), found)
    assert (corrected.value, corrected.ci_low, corrected.ci_high) == pytest.approx(
        (0.6, 0.25, 0.95)
    )
    assert corrected.reason == found.widened
    # within 0 and 1, a win rate's range
    assert widen(Estimate(value=0.9, ci_low=0.85, ci_high=0.95), found).ci_high == 1.0


def test_shorter_audited_replies_are_named_in_the_widening() -> None:
    rng = np.random.default_rng(0)
    judged = np.exp(rng.normal(np.log(500), 0.3, 300))
    audited = 0.6 * np.exp(rng.normal(np.log(500), 0.3, 100))
    wins = (np.arange(400) % 2).astype(float)  # the judges score both alike
    found = audit_fit((audited, judged), (wins[:100], wins[100:]), _shift(0.0, 0.06))
    assert found.length_effect is not None and found.length_effect < -1.0
    assert found.widened == (
        "widened by 0.06 each side: the audit cannot exclude a shift of 0.06 between the judges' "
        "win rate on the audited replies and on the judged ones; the audited replies are 40% "
        "shorter than the judged ones"
    )


def test_an_audit_too_small_to_bound_the_shift_withholds_the_correction() -> None:
    wins = (np.arange(330) % 2).astype(float)
    lengths = np.full(330, 400.0)
    noisy = audit_fit((lengths[:30], lengths[30:]), (wins[:30], wins[30:]), _shift(0.0, 0.18))
    assert noisy.widened_by is None and noisy.withheld == (
        "not corrected: the audit of 30 pairs is too small to correct (it knows the judges' "
        "shift between its replies and the judged ones only to +-0.18)"
    )
    assert widen(Estimate(value=0.6, ci_low=0.5, ci_high=0.7), noisy).value is None
    few = Estimate(value=0.01, reason="too few conversations (6 < 10)")
    found = audit_fit((lengths[:30], lengths[30:]), (wins[:30], wins[30:]), few)
    assert found.withheld is not None and "(too few conversations (6 < 10))" in found.withheld
    # the trap: a large but well-measured shift is no reason to withhold it
    sure = audit_fit((lengths[:30], lengths[30:]), (wins[:30], wins[30:]), _shift(0.3, 0.05))
    assert sure.withheld is None and sure.widened_by == pytest.approx(0.35)
    assert NOISE_LIMIT == 0.10


def test_planted_populations_get_a_correction_that_covers() -> None:
    # every scenario, 120 studies each (1,000 in benchmarks/validity.py); where a correction is
    # given it must cover (nominal at least 95%, bound 90% for 120 studies' noise), and with one
    # population it must be given: an equivalence test on the shift would withhold it in about
    # half of these (the trap), the widening does not
    found = ppi_studies.scenarios(studies=120, resamples=400, seed=1)
    assert found["same"].corrected_share >= 0.9
    for name, share in found.items():
        assert share.coverage is None or share.coverage >= 0.9, (name, share)
    same = found["same"].widened_by or 0.0
    for shifted in ("audited_better", "audited_slightly_better", "verbosity_bias"):
        assert (found[shifted].widened_by or 0.0) > same, shifted
    assert found["small_audit"].corrected_share < 0.2  # too small to correct, and said so


def test_without_the_widening_the_shifted_populations_miss_the_truth() -> None:
    rng = np.random.default_rng(2)
    for name, most in (("verbosity_bias", 20), ("audited_better", 28)):
        covered = sum(
            ppi_studies.study(ppi_studies.SCENARIOS[name], rng, 300, check=False).covered
            for _ in range(40)
        )
        assert covered <= most, name  # about a fifth and three fifths: the widening protects


def test_a_withheld_correction_is_a_warning_with_its_reason() -> None:
    shown = Estimate(value=0.6, ci_low=0.5, ci_high=0.7)
    reason = "not corrected: the audit of 30 pairs is too small to correct (...)"
    fit = AuditFit(
        length_effect=-1.2,
        judge_effect=0.1,
        judge_shift=Estimate(value=0.0, ci_low=-0.2, ci_high=0.2),
        noise_limit=NOISE_LIMIT,
        withheld=reason,
    )
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
