"""Label-set agreement: per-item true positive, false positive and false negative counts.

Macro- and micro-F1 and per-label F1 are functions of these counts summed over items, so they
bootstrap as matrix products (see `metrics.SumMetric`). An invalid answer predicts no label:
it misses every gold label, so it counts against the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from attunebench.analysis.bootstrap import safe_ratio
from attunebench.analysis.frame import FloatArray
from attunebench.records import ItemRecord

LabelSets = Callable[[ItemRecord], tuple[frozenset[str], frozenset[str]]]


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def primary_labels(record: ItemRecord) -> tuple[frozenset[str], frozenset[str]]:
    """Gold and predicted primary emotion (an item without a gold label counts for none)."""
    gold = _dict(record.gold).get("primary")
    if gold is None:
        return frozenset(), frozenset()
    predicted = _dict(record.prediction).get("primary") if record.status == "ok" else None
    return frozenset([str(gold)]), frozenset([str(predicted)]) if predicted else frozenset()


def behavior_labels(record: ItemRecord) -> tuple[frozenset[str], frozenset[str]]:
    gold = _dict(record.gold).get("behaviors")
    predicted = _dict(record.prediction).get("behaviors") if record.status == "ok" else None
    return (
        frozenset(str(v) for v in gold) if isinstance(gold, list) else frozenset(),
        frozenset(str(v) for v in predicted) if isinstance(predicted, list) else frozenset(),
    )


LABEL_SETS: dict[str, tuple[LabelSets, str]] = {
    "emotion": (primary_labels, "primary labels"),
    "behavior": (behavior_labels, "behavior labels"),
}


def label_counts(records: Sequence[ItemRecord], sets: LabelSets) -> tuple[list[str], FloatArray]:
    """The labels seen, and per item [tp per label, fp per label, fn per label]: (items, 3L)."""
    pairs = [sets(r) for r in records]
    labels = sorted(set().union(*(gold | predicted for gold, predicted in pairs)))
    index = {label: i for i, label in enumerate(labels)}
    width = max(len(labels), 1)
    out = np.zeros((len(records), 3 * width))
    for row, (gold, predicted) in enumerate(pairs):
        for label in gold & predicted:
            out[row, index[label]] = 1
        for label in predicted - gold:
            out[row, width + index[label]] = 1
        for label in gold - predicted:
            out[row, 2 * width + index[label]] = 1
    return labels, out


def per_label(sums: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """F1, precision, recall and support per label from summed counts (..., 3L)."""
    tp, fp, fn = np.split(sums, 3, axis=-1)
    return (safe_ratio(2 * tp, 2 * tp + fp + fn), safe_ratio(tp, tp + fp),
            safe_ratio(tp, tp + fn), tp + fn)  # fmt: skip


def macro_f1(sums: FloatArray) -> FloatArray:
    """Mean F1 over the labels defined in each row (present in gold or predictions)."""
    f1 = per_label(sums)[0]
    defined = ~np.isnan(f1)
    total = np.where(defined, f1, 0.0).sum(axis=-1)
    return safe_ratio(total, defined.sum(axis=-1).astype(np.float64))


def micro_f1(sums: FloatArray) -> FloatArray:
    tp, fp, fn = (part.sum(axis=-1) for part in np.split(sums, 3, axis=-1))
    return safe_ratio(2 * tp, 2 * tp + fp + fn)
