"""Corpus metrics over records, against hand-computed values."""

from __future__ import annotations

from typing import Any

import pytest

from attunebench.records import ItemRecord, Status
from attunebench.tasks import HEADLINE, METRICS, metrics_for


def emotion(gold: str, predicted: str | None, status: Status = "ok", **numbers: Any) -> ItemRecord:
    prediction = None if predicted is None else {"primary": predicted, **numbers.get("p", {})}
    return ItemRecord(
        task="emotion", model="m", conversation_id=f"c-{gold}-{predicted}", turn_index=0,
        item_id="turn",
        status=status, prediction=prediction, gold={"primary": gold, **numbers.get("g", {})},
        score=None if status == "failed" else float(predicted == gold),
        scores={"intensity_abs_error": numbers.get("err")},
    )  # fmt: skip


def test_emotion_accuracy_and_macro_f1_count_invalid_answers_as_wrong() -> None:
    records = [
        emotion("joy", "joy"), emotion("joy", "sadness"), emotion("sadness", "sadness"),
        emotion("anger", None, status="invalid"), emotion("anger", None, status="failed"),
    ]  # fmt: skip
    assert METRICS.get("emotion.accuracy")(records) == pytest.approx(2 / 4)
    # joy: TP1 FN1 -> 2/3; sadness: TP1 FP1 -> 2/3; anger: FN1 -> 0 (the failed one is left out)
    assert METRICS.get("emotion.macro_f1")(records) == pytest.approx((2 / 3 + 2 / 3 + 0) / 3)


def test_numeric_errors_and_spearman_use_parsed_answers_only() -> None:
    pairs = [(1, 2), (2, 1), (3, 4), (4, 3), (5, 5)]
    records = [
        emotion("joy", "joy", p={"intensity": p}, g={"intensity": g}, err=abs(p - g))
        for p, g in pairs
    ] + [emotion("joy", None, status="invalid")]
    assert METRICS.get("emotion.intensity_mae")(records) == pytest.approx(4 / 5)
    # ranks equal the values; d = (-1, 1, -1, 1, 0): rho = 1 - 6 * 4 / (5 * 24) = 0.8
    assert METRICS.get("emotion.intensity_spearman")(records) == pytest.approx(0.8)
    assert METRICS.get("emotion.valence_spearman")(records) is None  # no valence anywhere
    assert METRICS.get("emotion.intensity_spearman")(records[:2]) is None  # too few pairs


def test_every_task_has_its_headline_first() -> None:
    for task, headline in HEADLINE.items():
        names = metrics_for(task)
        assert names[0] == headline and all(n.startswith(f"{task}.") for n in names)
    assert METRICS.get("judge_audit.kappa")([]) is None
