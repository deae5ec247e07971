"""Calibration against planted truth: simulated answerers whose calibration is known.

- A calibrated answerer (gold drawn with the probability it states) has ECE near 0 and a
  Brier score equal, in expectation, to sum over its questions of 1 - sum_k p_k^2.
- An overconfident one (states 0.95, right 70% of the time) has ECE near 0.25.
- The trap: a constant answer at the base rate is perfectly calibrated (ECE near 0) and
  useless; AUROC, not ECE, must say so (0.5), while an informative answerer scores well above.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace

import numpy as np
import pytest

from attunebench.tasks.helpers.calibration import Row, calibration_metrics

ROWS = 20_000


class Answered:
    """Stands in for a task's view of one choice answer (its record has distributions)."""

    def __init__(self, rows: Sequence[Row]) -> None:
        self.rows = rows
        self.record = SimpleNamespace(distributions={"answer": "probabilities"})


METRICS = {m.name: m for m in calibration_metrics(lambda view: view.rows, positive="yes")}


def value(name: str, rows: Sequence[Row]) -> float:
    found = METRICS[name].value([Answered(rows)])  # one answer holding every row
    assert found is not None
    return found


def calibrated(seed: int) -> list[Row]:
    rng = np.random.default_rng(seed)
    rows: list[Row] = []
    for p in rng.uniform(0.05, 0.95, ROWS):
        gold = "yes" if rng.random() < p else "no"
        rows.append(({"yes": float(p), "no": float(1 - p)}, gold))
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_calibrated_answerer_has_ece_near_zero_and_its_expected_brier(seed: int) -> None:
    rows = calibrated(seed)
    assert value("ece", rows) < 0.02
    expected_brier = float(np.mean([1 - sum(p * p for p in probs.values()) for probs, _ in rows]))
    assert value("brier", rows) == pytest.approx(expected_brier, abs=0.01)
    assert value("auroc", rows) > 0.7


def test_an_overconfident_answerer_is_found_out() -> None:
    rng = np.random.default_rng(3)
    rows: list[Row] = []
    for _ in range(ROWS):
        right = rng.random() < 0.7
        gold, other = ("yes", "no") if rng.random() < 0.5 else ("no", "yes")
        top = gold if right else other
        rows.append(({top: 0.95, ("no" if top == "yes" else "yes"): 0.05}, gold))
    assert value("ece", rows) == pytest.approx(0.25, abs=0.02)
    # Brier of a stated 0.95 that is right 70% of the time: 0.7 * 2(0.05^2) + 0.3 * 2(0.95^2).
    assert value("brier", rows) == pytest.approx(0.7 * 0.005 + 0.3 * 1.805, abs=0.02)


def test_a_constant_base_rate_answer_is_calibrated_but_auroc_says_it_knows_nothing() -> None:
    rng = np.random.default_rng(4)
    rows: list[Row] = [
        ({"yes": 0.3, "no": 0.7}, "yes" if rng.random() < 0.3 else "no") for _ in range(ROWS)
    ]
    assert value("ece", rows) < 0.02
    assert value("auroc", rows) == pytest.approx(0.5)
    assert value("auroc", calibrated(5)) > value("auroc", rows) + 0.2
