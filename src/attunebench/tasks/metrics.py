"""Corpus-level metrics: pure functions of the records of one (task, model, variant).

Each metric registers in `METRICS` as `task.metric` and is `metric(records) -> float | None`,
so the analysis package can bootstrap any of them by resampling conversations. None (never
NaN) means the metric is undefined on these records (no items, a constant series, ...).

Which records count: `failed` records never do (no answer was had). `invalid` records count
against the model wherever a wrong answer is defined (accuracy, F1, win rate: an invalid
answer is a wrong one); numeric errors and correlations use parsed answers only, since an
unparseable answer has no number to compare.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from attunebench.judge import audit
from attunebench.records import ItemRecord
from attunebench.registry import Registry

Metric = Callable[[Sequence[ItemRecord]], float | None]
METRICS: Registry[Metric] = Registry("metric")
HEADLINE = {
    "emotion": "emotion.accuracy",
    "behavior": "behavior.micro_f1",
    "preference": "preference.accuracy",
    "response": "response.win_rate",
    "judge_audit": "judge_audit.accuracy",
}
SCORED = ("ok", "invalid")


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _scored(records: Sequence[ItemRecord]) -> list[ItemRecord]:
    return [r for r in records if r.status in SCORED]


def mean_score(records: Sequence[ItemRecord]) -> float | None:
    return _mean([r.score for r in _scored(records) if r.score is not None])


def mean_of(name: str, *, parsed_only: bool = False) -> Metric:
    """The mean of `scores[name]` where it is not None."""

    def metric(records: Sequence[ItemRecord]) -> float | None:
        kept = [r for r in records if r.status == "ok"] if parsed_only else _scored(records)
        return _mean([v for r in kept if (v := r.scores.get(name)) is not None])

    return metric


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else None


def macro_f1(pairs: Sequence[tuple[frozenset[str], frozenset[str]]]) -> float | None:
    """Unweighted mean of per-label F1 over every label in the gold or the predictions."""
    per_label = label_f1(pairs)
    return _mean(list(per_label.values()))


def label_f1(pairs: Sequence[tuple[frozenset[str], frozenset[str]]]) -> dict[str, float]:
    """F1 of each label, from (predicted, gold) label sets: 2TP / (2TP + FP + FN)."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for predicted, gold in pairs:
        tp.update(predicted & gold)
        fp.update(predicted - gold)
        fn.update(gold - predicted)
    labels = sorted(set(tp) | set(fp) | set(fn))
    return {label: 2 * tp[label] / (2 * tp[label] + fp[label] + fn[label]) for label in labels}


def micro_f1(pairs: Sequence[tuple[frozenset[str], frozenset[str]]]) -> float | None:
    tp = sum(len(p & g) for p, g in pairs)
    wrong = sum(len(p - g) + len(g - p) for p, g in pairs)
    return None if tp + wrong == 0 else 2 * tp / (2 * tp + wrong)


def emotion_primaries(records: Sequence[ItemRecord]) -> list[tuple[frozenset[str], frozenset[str]]]:
    """(predicted, gold) primary labels as one-element sets; an invalid answer predicts none."""
    pairs = []
    for r in _scored(records):
        gold = _field(r.gold, "primary")
        if gold is None:
            continue
        predicted = _field(r.prediction, "primary") if r.status == "ok" else None
        pairs.append((frozenset([predicted] if predicted else []), frozenset([gold])))
    return pairs


def behavior_sets(records: Sequence[ItemRecord]) -> list[tuple[frozenset[str], frozenset[str]]]:
    return [
        (
            frozenset(_field(r.prediction, "behaviors") or [] if r.status == "ok" else []),
            frozenset(_field(r.gold, "behaviors") or []),
        )
        for r in _scored(records)
    ]


def behavior_label_f1(records: Sequence[ItemRecord]) -> dict[str, float]:
    """Per-label F1 of the behavior task (a dict, so not a registered scalar metric)."""
    return label_f1(behavior_sets(records))


def numeric_pairs(records: Sequence[ItemRecord], name: str) -> list[tuple[float, float]]:
    return [
        (float(p), float(g))
        for r in records
        if r.status == "ok"
        and (p := _field(r.prediction, name)) is not None
        and (g := _field(r.gold, name)) is not None
    ]


def spearman_of(name: str) -> Metric:
    """Spearman's rho between predicted and gold values (scipy.stats.spearmanr); None for
    fewer than three pairs or a constant side."""

    def metric(records: Sequence[ItemRecord]) -> float | None:
        pairs = numeric_pairs(records, name)
        if len(pairs) < 3 or len({p for p, _ in pairs}) < 2 or len({g for _, g in pairs}) < 2:
            return None
        from scipy import stats  # imported here: it costs seconds, and most runs never call it

        rho = stats.spearmanr([p for p, _ in pairs], [g for _, g in pairs]).statistic
        return float(rho)

    return metric


def _register(name: str, metric: Metric) -> None:
    METRICS.register(name)(metric)


_register("emotion.accuracy", mean_score)
_register("emotion.macro_f1", lambda records: macro_f1(emotion_primaries(records)))
_register("emotion.jaccard", mean_of("jaccard"))
for _dimension in ("intensity", "valence", "arousal"):
    _register(f"emotion.{_dimension}_mae", mean_of(f"{_dimension}_abs_error", parsed_only=True))
    _register(f"emotion.{_dimension}_spearman", spearman_of(_dimension))
_register("behavior.micro_f1", lambda records: micro_f1(behavior_sets(records)))
_register("behavior.macro_f1", lambda records: macro_f1(behavior_sets(records)))
_register("behavior.item_f1", mean_score)
_register("preference.accuracy", mean_score)
_register("preference.consistency", mean_of("consistent", parsed_only=True))
_register("preference.flip_rate", audit.flip_rate)
_register("response.win_rate", mean_score)
_register("response.win_vs_chosen", mean_of("win_vs_chosen", parsed_only=True))
_register("response.win_vs_rejected", mean_of("win_vs_rejected", parsed_only=True))
_register("response.rubric", mean_of("rubric", parsed_only=True))
_register("judge_audit.accuracy", audit.judge_accuracy)
_register("judge_audit.agreement", audit.verdict_agreement)
_register("judge_audit.kappa", audit.judge_kappa)
_register("judge_audit.flip_rate", audit.flip_rate)
_register("judge_audit.longer_win_share", audit.longer_win_share)
_register("judge_audit.participant_longer_share", audit.participant_longer_share)
_register("judge_audit.length_balanced_agreement", audit.length_balanced_agreement)
_register("judge_audit.length_matched_agreement", audit.length_matched_agreement)


def metrics_for(task: str) -> list[str]:
    """The registered metric names of one task, headline first."""
    names = [n for n in METRICS.names() if n.split(".", 1)[0] == task]
    first = HEADLINE.get(task)
    return sorted(names, key=lambda n: (n != first, n))
