"""Every registered metric, each defined once, against a computation written here.

For every metric in `METRICS` (after `load_tasks()`), on typed records each task made of its
own items (`metric_records`):

- with weights of 1 it equals an independent computation below: scikit-learn's F1 and
  Cohen's kappa, `scipy.stats.spearmanr`, or a plain loop over the typed gold and prediction;
- one resample given as explicit per-conversation counts equals the same metric on the
  records repeated that many times (each copy its own conversation, as a cluster bootstrap
  draws it), and the independent computation on those repeated records.

A metric registered without a computation here fails the test: none is added untested.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from metric_records import records_by_task
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score, f1_score, roc_auc_score
from sklearn.preprocessing import MultiLabelBinarizer

from attunebench.stats import Weights
from attunebench.tasks import load_tasks
from attunebench.tasks.base import View
from attunebench.tasks.behavior import f1 as set_f1
from attunebench.tasks.helpers.metrics import METRICS, RATIO_BIAS_CLUSTERS
from attunebench.tasks.helpers.pairs import TIE

load_tasks()
AnyView = View[Any, Any]
Computation = Callable[[Sequence[AnyView]], float | None]
INDEPENDENT: dict[str, Computation] = {}


def independent(name: str) -> Callable[[Computation], Computation]:
    def add(fn: Computation) -> Computation:
        assert name not in INDEPENDENT, name
        INDEPENDENT[name] = fn
        return fn

    return add


# Metrics whose label set and corrections the items fix (macro-F1): a resample averages over
# the labels of the items it drew from, less their ratio biases there, so the records repeated
# are scored that way; within each corpus part, or (True) with the parts pooled.
LABELS_OF: dict[str, tuple[Callable[[Sequence[AnyView]], LabelSets], bool]] = {}


def fixed_labels(
    name: str, sets: Callable[[Sequence[AnyView]], LabelSets], pooled: bool = False
) -> Callable[[Computation], Computation]:
    LABELS_OF[name] = (sets, pooled)
    return independent(name)


def parts(views: Sequence[AnyView]) -> dict[str | None, list[AnyView]]:
    """The views of each corpus part (their gold's `part`)."""
    found: dict[str | None, list[AnyView]] = defaultdict(list)
    for v in views:
        found[v.gold.part].append(v)
    return found


def within_parts(views: Sequence[AnyView], fn: Computation) -> float | None:
    """`fn` within each corpus part, averaged over the parts where it is defined, each
    weighted by its items."""
    found = [(fn(group), len(group)) for group in parts(views).values()]
    defined = [(value, n) for value, n in found if value is not None]
    return sum(v * n for v, n in defined) / sum(n for _, n in defined) if defined else None


def across_parts(views: Sequence[AnyView], fn: Computation) -> float | None:
    """`fn` over the items of every part pooled; undefined where they come from one part."""
    return fn(views) if len(parts(views)) > 1 else None


def mean(values: Sequence[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def rho(pairs: Sequence[tuple[float | None, float | None]]) -> float | None:
    usable = [(x, y) for x, y in pairs if x is not None and y is not None]
    if len(usable) < 3 or len({x for x, _ in usable}) < 2 or len({y for _, y in usable}) < 2:
        return None  # too few pairs, or a constant side: undefined
    value = spearmanr([x for x, _ in usable], [y for _, y in usable]).statistic
    return None if math.isnan(value) else float(value)


def f1(sets: Sequence[tuple[set[str], set[str]]], average: str) -> float | None:
    predicted, gold = [p for p, _ in sets], [g for _, g in sets]
    if not any(predicted) and not any(gold):
        return None
    binarizer = MultiLabelBinarizer().fit(predicted + gold)
    return float(
        f1_score(
            binarizer.transform(gold),
            binarizer.transform(predicted),
            average=average,
            zero_division=0,
        )
    )


LabelSets = Sequence[tuple[str, set[str], set[str]]]  # (conversation, predicted, gold)


def label_f1(sets: LabelSets, label: str) -> tuple[float, float] | None:
    """One label's F1, 2TP / (2TP + FP + FN), and its ratio bias
    m (R sum(d^2) - sum(t d)) / ((m - 1) sum(d)^2) over the m conversations that name a label
    (0 unless its gold is in `RATIO_BIAS_CLUSTERS` of them or more); None if no item names it,
    written out per conversation."""
    conversations = sorted({c for c, predicted, gold in sets if predicted or gold})
    top, bottom, with_gold = Counter[str](), Counter[str](), set()
    for c, predicted, gold in sets:
        hit = label in predicted and label in gold
        top[c] += 2 * hit
        bottom[c] += (label in predicted) + (label in gold)
        if label in gold:
            with_gold.add(c)
    if sum(bottom.values()) == 0:
        return None
    ratio = sum(top.values()) / sum(bottom.values())
    if len(with_gold) < RATIO_BIAS_CLUSTERS:
        return ratio, 0.0
    m = len(conversations)
    squares = sum(bottom[c] ** 2 for c in conversations)
    products = sum(top[c] * bottom[c] for c in conversations)
    return ratio, m * (ratio * squares - products) / ((m - 1) * sum(bottom.values()) ** 2)


def macro_f1(sets: LabelSets, fixed_by: LabelSets | None = None) -> float | None:
    """Macro-F1 over the gold's labels, each label's F1 less its ratio bias, clipped to
    [0, 1]; the labels and their biases are those of `fixed_by` (the items a resample drew
    from), by default of `sets`."""
    fixed_by = sets if fixed_by is None else fixed_by
    found = []
    for label in sorted(set().union(*(gold for _, _, gold in fixed_by))):
        scored, corrected = label_f1(sets, label), label_f1(fixed_by, label)
        if scored is not None and corrected is not None:
            found.append(min(max(scored[0] - corrected[1], 0.0), 1.0))
    return sum(found) / len(found) if found else None


def with_conversations(
    views: Sequence[AnyView], sets: Sequence[tuple[set[str], set[str]]]
) -> LabelSets:
    return [(v.record.conversation_id, p, g) for v, (p, g) in zip(views, sets, strict=True)]


def ok(view: AnyView) -> bool:
    return view.status == "ok"


# Emotion ------------------------------------------------------------------------------------

SCALES = {"intensity": 4.0, "valence": 2.0, "arousal": 1.0}


def emotion_labels(view: AnyView) -> set[str]:
    gold = view.gold
    return set(gold.emotions) | ({gold.primary} if gold.primary else set())


@independent("emotion.score")
def _(views: Sequence[AnyView]) -> float | None:
    scores = []
    for v in views:
        labels = emotion_labels(v)
        if not labels:
            continue
        if not ok(v):
            scores.append(0.0)
        elif v.gold.primary:
            scores.append(float(v.prediction.primary == v.gold.primary))
        else:
            scores.append(float(v.prediction.primary in labels))
    return mean(scores)


def primary_sets(views: Sequence[AnyView]) -> LabelSets:
    labelled = [v for v in views if v.gold.primary]
    sets = [({v.prediction.primary} if ok(v) else set(), {v.gold.primary}) for v in labelled]
    return with_conversations(labelled, sets)


@fixed_labels("emotion.macro_f1", primary_sets)
def _(views: Sequence[AnyView]) -> float | None:
    return within_parts(views, lambda group: macro_f1(primary_sets(group)))


@fixed_labels("emotion.pooled_macro_f1", primary_sets, pooled=True)
def _(views: Sequence[AnyView]) -> float | None:
    return across_parts(views, lambda group: macro_f1(primary_sets(group)))


@independent("emotion.jaccard")
def _(views: Sequence[AnyView]) -> float | None:
    values = []
    for v in views:
        gold = emotion_labels(v)
        if gold:
            named = set(v.prediction.emotions) if ok(v) else set()
            values.append(len(named & gold) / len(named | gold))
    return mean(values)


def emotion_sets(views: Sequence[AnyView]) -> list[tuple[set[str], set[str]]]:
    """Every reported emotion against every named one, on the items that report any."""
    return [
        (set(v.prediction.emotions) if ok(v) else set(), emotion_labels(v))
        for v in views
        if emotion_labels(v)
    ]


def emotion_label_sets(views: Sequence[AnyView]) -> LabelSets:
    return with_conversations([v for v in views if emotion_labels(v)], emotion_sets(views))


independent("emotion.labels_micro_f1")(
    lambda views: within_parts(views, lambda group: f1(emotion_sets(group), "micro"))
)
fixed_labels("emotion.labels_macro_f1", emotion_label_sets)(
    lambda views: within_parts(views, lambda group: macro_f1(emotion_label_sets(group)))
)


def asked(view: AnyView, name: str) -> bool:
    """Whether the item asked for this number: every reported one when generated; in
    choice form only the intensity."""
    reported = getattr(view.gold, name) is not None
    return reported and (view.record.mode == "generate" or name == "intensity")


def guessed(view: AnyView, name: str) -> float | None:
    return getattr(view.prediction, name) if ok(view) else None


def emotion_numbers(name: str) -> None:
    span = SCALES[name]

    def errors(views: Sequence[AnyView]) -> float | None:
        found = []
        for v in views:
            if asked(v, name):
                guess = guessed(v, name)
                found.append(span if guess is None else abs(guess - getattr(v.gold, name)))
        return mean(found)

    def coverage(views: Sequence[AnyView]) -> float | None:
        return mean([float(guessed(v, name) is not None) for v in views if asked(v, name)])

    def spearman(views: Sequence[AnyView]) -> float | None:
        return rho([(guessed(v, name), getattr(v.gold, name)) for v in views])

    independent(f"emotion.{name}_mae")(errors)
    independent(f"emotion.{name}_coverage")(coverage)
    independent(f"emotion.{name}_spearman")(spearman)


for _name in SCALES:
    emotion_numbers(_name)


@independent("emotion.panas_mae")
def _(views: Sequence[AnyView]) -> float | None:
    per_record = []
    for v in views:
        if v.gold.panas:
            given = v.prediction.panas if ok(v) else {}
            errors = [
                4.0 if given.get(k) is None else abs(given[k] - truth)
                for k, truth in v.gold.panas.items()
            ]
            per_record.append(sum(errors) / len(errors))
    return mean(per_record)


@independent("emotion.panas_spearman")
def _(views: Sequence[AnyView]) -> float | None:
    pairs = []
    for v in views:
        given = v.prediction.panas if ok(v) else {}
        pairs += [(given.get(k), truth) for k, truth in v.gold.panas.items()]
    return rho(pairs)


# Behavior -----------------------------------------------------------------------------------


def behavior_sets(views: Sequence[AnyView]) -> list[tuple[set[str], set[str]]]:
    return [(set(v.prediction.behaviors) if ok(v) else set(), set(v.gold.behaviors)) for v in views]


@independent("behavior.score")
def _(views: Sequence[AnyView]) -> float | None:
    return mean(
        [
            set_f1(p, g) if ok(v) else 0.0
            for v, (p, g) in zip(views, behavior_sets(views), strict=True)
        ]
    )


def behavior_label_sets(views: Sequence[AnyView]) -> LabelSets:
    return with_conversations(views, behavior_sets(views))


independent("behavior.micro_f1")(
    lambda views: within_parts(views, lambda group: f1(behavior_sets(group), "micro"))
)
fixed_labels("behavior.macro_f1", behavior_label_sets)(
    lambda views: within_parts(views, lambda group: macro_f1(behavior_label_sets(group)))
)
fixed_labels("behavior.pooled_macro_f1", behavior_label_sets, pooled=True)(
    lambda views: across_parts(views, lambda group: macro_f1(behavior_label_sets(group)))
)


# Preference -----------------------------------------------------------------------------------


def both(view: AnyView) -> tuple[str, str] | None:
    guess = view.prediction
    if guess is None or guess.ab is None or guess.ba is None:
        return None
    return guess.ab, guess.ba


@independent("preference.score")
def _(views: Sequence[AnyView]) -> float | None:
    key = [v.gold.key for v in views]
    return mean(
        [
            (float(v.prediction.ab == k) + float(v.prediction.ba == k)) / 2 if ok(v) else 0.0
            for v, k in zip(views, key, strict=True)
        ]
    )


@independent("preference.consistency")
def _(views: Sequence[AnyView]) -> float | None:
    return mean([float(v.prediction.ab == v.prediction.ba) for v in views if ok(v)])


def flips(views: Sequence[AnyView]) -> float | None:
    return mean([float(pair[0] != pair[1]) for v in views if (pair := both(v))])


independent("preference.flip_rate")(flips)


@independent("preference.first_shown_share")
def _(views: Sequence[AnyView]) -> float | None:
    letters = [
        letter
        for v in views
        if v.prediction is not None
        for letter in (v.prediction.ab_letter, v.prediction.ba_letter)
        if letter in ("A", "B")
    ]
    return mean([float(letter == "A") for letter in letters])


@independent("preference.first_shown_probability")
def _(views: Sequence[AnyView]) -> float | None:
    per_view = []
    for v in views:
        spreads = v.prediction.probabilities if v.prediction is not None else {}
        shares = [s["A"] / (s["A"] + s["B"]) for s in spreads.values() if s["A"] + s["B"] > 0]
        if shares:
            per_view.append(sum(shares) / len(shares))
    return mean(per_view)


# The judge audit ----------------------------------------------------------------------------


def picks(view: AnyView) -> list[str]:
    guess = view.prediction
    return [] if guess is None else [p for p in (guess.ab, guess.ba) if p is not None]


def side(key: str, gold: Any) -> str:
    return "tie" if key == TIE else ("first" if key == gold.first else "second")


def longer(gold: Any) -> str | None:
    if gold.len_first == gold.len_second:
        return None
    return gold.first if gold.len_first > gold.len_second else gold.second


@independent("judge_audit.score")
def _(views: Sequence[AnyView]) -> float | None:
    return mean([float(ok(v) and v.prediction.ab == v.prediction.ba == v.gold.key) for v in views])


@independent("judge_audit.agreement")
def _(views: Sequence[AnyView]) -> float | None:
    return mean([float(p == v.gold.key) for v in views for p in picks(v)])


@independent("judge_audit.kappa")
def _(views: Sequence[AnyView]) -> float | None:
    truth = [side(v.gold.key, v.gold) for v in views for _ in picks(v)]
    judged = [side(p, v.gold) for v in views for p in picks(v)]
    return float(cohen_kappa_score(judged, truth)) if judged else None


independent("judge_audit.flip_rate")(flips)


@independent("judge_audit.longer_win_share")
def _(views: Sequence[AnyView]) -> float | None:
    return mean(
        [
            float(p == longer(v.gold))
            for v in views
            for p in picks(v)
            if p != TIE and longer(v.gold) is not None
        ]
    )


@independent("judge_audit.participant_longer_share")
def _(views: Sequence[AnyView]) -> float | None:
    return mean(
        [
            float(v.gold.key == longer(v.gold))
            for v in views
            if v.gold.key != TIE and longer(v.gold) is not None
        ]
    )


@independent("judge_audit.length_balanced_agreement")
def _(views: Sequence[AnyView]) -> float | None:
    groups: dict[bool, list[float]] = {True: [], False: []}
    for v in views:
        if v.gold.key == TIE or longer(v.gold) is None:
            continue
        for p in picks(v):
            groups[v.gold.key == longer(v.gold)].append(float(p == v.gold.key))
    means = [mean(group) for group in groups.values()]
    return None if None in means else (means[0] + means[1]) / 2  # type: ignore[operator]


@independent("judge_audit.length_matched_agreement")
def _(views: Sequence[AnyView]) -> float | None:
    def matched(gold: Any) -> bool:
        low, high = sorted((gold.len_first, gold.len_second))
        return low > 0 and high / low <= 1.25

    return mean([float(p == v.gold.key) for v in views if matched(v.gold) for p in picks(v)])


# Response -----------------------------------------------------------------------------------


def verdict_win(verdict: Any) -> float:
    if verdict.status != "ok":
        return 0.0  # unusable: a loss
    mine = "A" if verdict.order.endswith("model-first") else "B"
    winner = verdict.parsed["winner"]
    return 0.5 if winner == "tie" else float(winner == mine)


def per_judge(view: AnyView, kind: str) -> float | None:
    """The mean over judges of each judge's mean over its verdicts of this kind."""
    by_judge: dict[str, list[float]] = defaultdict(list)
    for verdict in view.record.verdicts:
        if (verdict.order or "").startswith("real/"):
            continue  # the real reply's verdict: not the model's
        if kind == "rubric" and verdict.mode == "rubric":
            score = verdict.parsed["score"] if verdict.status == "ok" else 1.0
            by_judge[verdict.judge].append(float(score))
        elif kind != "rubric" and (verdict.order or "").startswith(kind):
            by_judge[verdict.judge].append(verdict_win(verdict))
    return mean([sum(v) / len(v) for v in by_judge.values()])


def panel(view: AnyView, kind: str) -> float | None:
    """The judges' majority in each order of this comparison (a split panel 0.5), averaged."""
    by_order: dict[str, list[float]] = defaultdict(list)
    for verdict in view.record.verdicts:
        if (verdict.order or "").startswith(kind):
            by_order[verdict.order or ""].append(verdict_win(verdict))
    results = []
    for wins in by_order.values():
        (top, count), *rest = Counter(wins).most_common()
        results.append(0.5 if rest and rest[0][1] == count else top)
    return mean(results)


def response_score(view: AnyView) -> float:
    if not ok(view):
        return 0.0
    if view.gold.real is not None:  # no pair to compare with: the rubric alone
        return ((per_judge(view, "rubric") or 1.0) - 1.0) / 9.0
    return ((panel(view, "vs_chosen") or 0) + (panel(view, "vs_rejected") or 0)) / 2


independent("response.score")(lambda vs: mean([response_score(v) for v in vs]))


def real_score(view: AnyView) -> float | None:
    """The judges' mean of each one's usable rubric scores of the real reply."""
    by_judge: dict[str, list[float]] = defaultdict(list)
    for verdict in view.record.verdicts:
        if (verdict.order or "").startswith("real/") and verdict.status == "ok":
            by_judge[verdict.judge].append(float(verdict.parsed["score"]))
    return mean([sum(v) / len(v) for v in by_judge.values()])


def real_thumbs(views: Sequence[AnyView], liked: bool) -> float | None:
    return mean([real_score(v) for v in views if v.gold.real_liked is liked])


independent("response.real_rubric_thumb_up")(lambda vs: real_thumbs(vs, True))
independent("response.real_rubric_thumb_down")(lambda vs: real_thumbs(vs, False))


@independent("response.real_thumb_auroc")
def _(views: Sequence[AnyView]) -> float | None:
    found = [(real_score(v), v.gold.real_liked) for v in views if v.gold.real_liked is not None]
    usable = [(s, liked) for s, liked in found if s is not None]
    if len({liked for _, liked in usable}) < 2:
        return None
    return float(roc_auc_score([liked for _, liked in usable], [s for s, _ in usable]))


independent("response.win_vs_chosen")(lambda vs: mean([panel(v, "vs_chosen") for v in vs]))
independent("response.win_vs_rejected")(lambda vs: mean([panel(v, "vs_rejected") for v in vs]))
independent("response.rubric")(lambda vs: mean([per_judge(v, "rubric") for v in vs]))


@independent("response.one_order_share")
def _(views: Sequence[AnyView]) -> float | None:
    def lost_one(view: AnyView) -> bool:
        usable: dict[tuple[str, str], int] = defaultdict(int)
        for verdict in view.record.verdicts:
            if verdict.mode == "pairwise":
                comparison = (verdict.judge, (verdict.order or "").split("/")[0])
                usable[comparison] += verdict.status == "ok"
        return 1 in usable.values()

    return mean([float(lost_one(v)) for v in views])


# Outcome and rating -------------------------------------------------------------------------


def outcome_guess(view: AnyView, name: str) -> float | None:
    return view.prediction.values.get(name) if ok(view) else None


def informative(cov: float, vx: float, vy: float) -> float | None:
    """r, 0 where the prediction does not vary, None where the gold does not."""
    scale = max(vx + vy, 1.0)
    if vy <= 1e-12 * scale:
        return None
    return 0.0 if vx <= 1e-12 * scale else cov / math.sqrt(vx * vy)


AdjustedRow = tuple[object, str, float | None, float]  # cell, conversation, guess, gold


def residuals(rows: Sequence[AdjustedRow]) -> list[tuple[float, float]]:
    """Guess and gold less their cell's mean (answered guesses' mean; 0 if unanswered)."""
    by_cell: dict[object, list[AdjustedRow]] = defaultdict(list)
    for row in rows:
        by_cell[row[0]].append(row)
    out = []
    for cell, _, guess, gold in rows:
        group = by_cell[cell]
        answered = [g for _, _, g, _ in group if g is not None]
        gold_mean = sum(y for *_, y in group) / len(group)
        rx = 0.0 if guess is None else guess - sum(answered) / len(answered)
        out.append((rx, gold - gold_mean))
    return out


def pearson(pairs: Sequence[tuple[float, float]], weights: Sequence[float]) -> float | None:
    total = sum(weights)
    mx = sum(w * x for (x, _), w in zip(pairs, weights, strict=True)) / total
    my = sum(w * y for (_, y), w in zip(pairs, weights, strict=True)) / total
    cov = sum(w * (x - mx) * (y - my) for (x, y), w in zip(pairs, weights, strict=True))
    vx = sum(w * (x - mx) ** 2 for (x, _), w in zip(pairs, weights, strict=True))
    vy = sum(w * (y - my) ** 2 for (_, y), w in zip(pairs, weights, strict=True))
    return informative(cov, vx, vy)


def adjusted_r(rows: Sequence[AdjustedRow]) -> float | None:
    found = residuals(rows)
    return informative(
        sum(x * y for x, y in found), sum(x * x for x, _ in found), sum(y * y for _, y in found)
    )


def person_parts(rows: Sequence[AdjustedRow]) -> tuple[float | None, float | None]:
    """(between, within): conversations' mean residuals; residuals less those means."""
    found = residuals(rows)
    members: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        members[row[1]].append(i)
    means = {
        c: (sum(found[i][0] for i in ix) / len(ix), sum(found[i][1] for i in ix) / len(ix))
        for c, ix in members.items()
    }
    between = pearson(list(means.values()), [1.0] * len(means))
    within = [
        (x - means[r[1]][0], y - means[r[1]][1]) for (x, y), r in zip(found, rows, strict=True)
    ]
    return between, pearson(within, [1.0] * len(within))


def outcome_field(name: str) -> None:
    def errors(views: Sequence[AnyView]) -> float | None:
        found = []
        for v in views:
            if name in v.gold.values:
                low, high = v.gold.scales[name]
                guess = outcome_guess(v, name)
                found.append(high - low if guess is None else abs(guess - v.gold.values[name]))
        return mean(found)

    def coverage(views: Sequence[AnyView]) -> float | None:
        return mean(
            [float(outcome_guess(v, name) is not None) for v in views if name in v.gold.values]
        )

    def spearman(views: Sequence[AnyView]) -> float | None:
        return rho([(outcome_guess(v, name), v.gold.values.get(name)) for v in views])

    independent(f"outcome.{name}_mae")(errors)
    independent(f"outcome.{name}_coverage")(coverage)
    independent(f"outcome.{name}_spearman")(spearman)


HEADLINE_FIELDS = ("final_intensity", "rating", "empathy", "relevance")
for _name in HEADLINE_FIELDS:
    outcome_field(_name)


def asked_fields(view: AnyView) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """The fields an outcome item asks, each with its scale."""
    return tuple(sorted((k, tuple(scale)) for k, scale in view.gold.scales.items()))


def mean_adjusted_r(views: Sequence[AnyView], within: bool) -> float | None:
    """The mean over fields of the adjusted r, each field's cell its scale and bin of messages
    shown, within the item's part and fields asked (`within`) or not."""
    found = []
    for name in HEADLINE_FIELDS:
        rows: list[AdjustedRow] = [
            (
                (
                    (v.gold.part, asked_fields(v)) if within else (),
                    (tuple(v.gold.scales[name]), v.gold.shown_bin),
                ),
                v.record.conversation_id,
                outcome_guess(v, name),
                v.gold.values[name],
            )
            for v in views
            if name in v.gold.values
        ]
        found.append(adjusted_r(rows) if rows else None)
    return mean(found)


independent("outcome.mean_adjusted_r")(lambda views: mean_adjusted_r(views, within=True))
independent("outcome.pooled_mean_adjusted_r")(
    lambda views: across_parts(views, lambda group: mean_adjusted_r(group, within=False))
)


@independent("outcome.mean_spearman")
def _(views: Sequence[AnyView]) -> float | None:
    found = []
    for name in HEADLINE_FIELDS:
        pairs = []
        for v in views:
            if name in v.gold.values:
                low, high = v.gold.scales[name]
                guess = outcome_guess(v, name)
                pairs.append(((low + high) / 2 if guess is None else guess, v.gold.values[name]))
        if len({x for x, _ in pairs}) == 1 and len({y for _, y in pairs}) > 1:
            found.append(0.0)  # a constant guess says nothing: 0, not undefined
        else:
            found.append(rho(pairs))
    return mean(found)


@independent("outcome.score")
def _(views: Sequence[AnyView]) -> float | None:
    scores = []
    for v in views:
        shares = []
        for name, truth in v.gold.values.items():
            low, high = v.gold.scales[name]
            guess = outcome_guess(v, name)
            shares.append(1.0 if guess is None else abs(guess - truth) / (high - low))
        scores.append(1.0 - sum(shares) / len(shares))
    return mean(scores)


def rating_guess(view: AnyView) -> float | None:
    return view.prediction.values.get("rating") if ok(view) else None


def thumb_agrees(view: AnyView) -> float:
    return float(ok(view) and (view.prediction.score >= 6) == view.gold.liked)


independent("judge_thumbs.score")(lambda views: mean([thumb_agrees(v) for v in views]))


@independent("judge_thumbs.balanced_agreement")
def _(views: Sequence[AnyView]) -> float | None:
    sides = [
        mean([thumb_agrees(v) for v in views if v.gold.liked == liked]) for liked in (True, False)
    ]
    return None if None in sides else sum(s for s in sides if s is not None) / 2


@independent("rating.score")
def _(views: Sequence[AnyView]) -> float | None:
    return mean(
        [
            0.0 if (g := rating_guess(v)) is None else 1.0 - abs(g - v.gold.rating) / 4.0
            for v in views
        ]
    )


def rating_positions(views: Sequence[AnyView], within: bool = True) -> list[AdjustedRow]:
    """Each item's cell (its position cell within its corpus part, or alone), conversation,
    guess and rating."""
    return [
        (
            (v.gold.part, v.gold.cell) if within else v.gold.cell,
            v.record.conversation_id,
            rating_guess(v),
            v.gold.rating,
        )
        for v in views
    ]


independent("rating.position_adjusted_r")(lambda views: adjusted_r(rating_positions(views)))
independent("rating.pooled_position_adjusted_r")(
    lambda views: across_parts(views, lambda group: adjusted_r(rating_positions(group, False)))
)
independent("rating.between_person_r")(lambda views: person_parts(rating_positions(views))[0])
independent("rating.within_person_r")(lambda views: person_parts(rating_positions(views))[1])


@independent("rating.position_skill")
def _(views: Sequence[AnyView]) -> float | None:
    errors = [16.0 if (g := rating_guess(v)) is None else (g - v.gold.rating) ** 2 for v in views]
    reference = sum(y * y for _, y in residuals(rating_positions(views)))
    return 1.0 - sum(errors) / reference if reference > 1e-12 else None


@independent("rating.rating_mae")
def _(views: Sequence[AnyView]) -> float | None:
    return mean([4.0 if (g := rating_guess(v)) is None else abs(g - v.gold.rating) for v in views])


independent("rating.rating_coverage")(
    lambda views: mean([float(rating_guess(v) is not None) for v in views])
)
independent("rating.rating_spearman")(
    lambda views: rho([(rating_guess(v), v.gold.rating) for v in views])
)


@independent("rating.within_conversation_spearman")
def _(views: Sequence[AnyView]) -> float | None:
    by_conversation: dict[str, list[AnyView]] = defaultdict(list)
    for v in views:
        by_conversation[v.record.conversation_id].append(v)
    rhos = [
        rho([(rating_guess(v), v.gold.rating) for v in group]) for group in by_conversation.values()
    ]
    return mean(rhos)


# Calibration of choice answers ---------------------------------------------------------------
# Each task's rows written out again here: (every option's probability, the gold option).

Row = tuple[dict[str, float], str]


def emotion_rows(view: AnyView) -> list[Row]:
    guess = view.prediction
    if guess is None or not guess.label_probabilities or not view.gold.primary:
        return []
    return [(dict(guess.label_probabilities), view.gold.primary)]


def behavior_rows(view: AnyView) -> list[Row]:
    guess = view.prediction
    if guess is None:
        return []
    return [
        ({"yes": p, "no": 1 - p}, "yes" if label in view.gold.behaviors else "no")
        for label, p in guess.yes_probabilities.items()
    ]


def pair_rows(view: AnyView) -> list[Row]:
    guess = view.prediction
    if guess is None:
        return []
    truth = side(view.gold.key, view.gold)
    rows = []
    for order, spread in guess.probabilities.items():
        shown_first = "first" if order == "ab" else "second"
        shown_second = "second" if order == "ab" else "first"
        rows.append(
            ({shown_first: spread["A"], shown_second: spread["B"], "tie": spread["tie"]}, truth)
        )
    return rows


def outcome_rows(view: AnyView) -> list[Row]:
    guess = view.prediction
    if guess is None:
        return []
    return [
        (dict(spread), f"{view.gold.values[name]:g}")
        for name, spread in guess.probabilities.items()
        if name in view.gold.values
    ]


def rating_rows(view: AnyView) -> list[Row]:
    guess = view.prediction
    if guess is None:
        return []
    return [(dict(spread), f"{view.gold.rating:g}") for spread in guess.probabilities.values()]


def brier(rows: Sequence[Row]) -> float | None:
    scores = [
        sum((probs.get(k, 0.0) - float(k == gold)) ** 2 for k in set(probs) | {gold})
        for probs, gold in rows
    ]
    return mean(scores)


def ece(rows: Sequence[Row]) -> float | None:
    if not rows:
        return None
    correct, confidence = [0.0] * 10, [0.0] * 10
    for probs, gold in rows:
        top = max(probs, key=lambda k: probs[k])  # the first listed among equals
        b = min(int(probs[top] * 10), 9)
        correct[b] += float(top == gold)
        confidence[b] += probs[top]
    return sum(abs(c - p) for c, p in zip(correct, confidence, strict=True)) / len(rows)


def auroc(rows: Sequence[Row], positive: str) -> float | None:
    truth = [gold == positive for _, gold in rows]
    if len(set(truth)) < 2:
        return None
    return float(roc_auc_score(truth, [probs.get(positive, 0.0) for probs, _ in rows]))


# The toy task of tests/tasks/toy, registered for the whole run (tests/conftest.py): a new
# task's metrics get their independent computation here, as every shipped task's do.
@independent("intense.score")
def _(views: Sequence[AnyView]) -> float | None:
    return mean([float(ok(v) and v.prediction.intense == v.gold.intense) for v in views])


CALIBRATED: dict[str, tuple[Callable[[AnyView], list[Row]], str | None]] = {
    "emotion": (emotion_rows, None),
    "behavior": (behavior_rows, "yes"),
    "preference": (pair_rows, "first"),
    "judge_audit": (pair_rows, "first"),
    "outcome": (outcome_rows, None),
    "rating": (rating_rows, None),
}


def calibration(task: str, rows_of: Callable[[AnyView], list[Row]], positive: str | None) -> None:
    def rows(views: Sequence[AnyView]) -> list[Row]:
        return [row for v in views for row in rows_of(v)]

    independent(f"{task}.brier")(lambda views: brier(rows(views)))
    independent(f"{task}.ece")(lambda views: ece(rows(views)))
    if positive is not None:
        independent(f"{task}.auroc")(lambda views: auroc(rows(views), positive))


for _task, (_rows_of, _positive) in CALIBRATED.items():
    calibration(_task, _rows_of, _positive)


# The tests ----------------------------------------------------------------------------------

NAMES = METRICS.names()


def test_every_registered_metric_has_an_independent_computation() -> None:
    assert NAMES, "no metric is registered"
    missing = sorted(set(NAMES) - set(INDEPENDENT))
    assert not missing, f"metrics with no independent computation in this test: {missing}"
    assert sorted(INDEPENDENT) == NAMES  # and none computed here for a metric that is gone
    tasks = {name.split(".")[0] for name in NAMES}
    assert tasks == set(load_tasks().names())
    for task in tasks:  # each task's headline, and its mean per-item score, are registered
        assert f"{task}.score" in NAMES
        assert f"{task}.{load_tasks().get(task)().scoring.headline_metric}" in NAMES


def records(name: str) -> list[AnyView]:
    return records_by_task()[name.split(".")[0]]


def undefined(value: float | None) -> bool:
    return value is None or math.isnan(value)


@pytest.mark.parametrize("name", NAMES)
def test_weights_of_one_equal_the_independent_computation(name: str) -> None:
    assert name in INDEPENDENT, f"{name} has no independent computation in this test"
    views = records(name)
    expected = INDEPENDENT[name](views)
    assert expected is not None, f"the test's records leave {name} undefined: add some"
    assert METRICS.get(name).value(views) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def repeated(views: Sequence[AnyView], counts: np.ndarray, cluster: np.ndarray) -> list[AnyView]:
    """Each record as many times as its conversation was drawn, every copy its own
    conversation."""
    out = []
    for view, c in zip(views, cluster, strict=True):
        for copy in range(int(counts[c])):
            record = view.record.model_copy(
                update={"conversation_id": f"{view.record.conversation_id}#{copy}"}
            )
            out.append(View(record, view.gold, view.prediction))
    return out


def resampled_macro_f1(
    name: str, again: Sequence[AnyView], views: Sequence[AnyView]
) -> float | None:
    """A macro-F1 of the records repeated, with the labels and corrections of the records
    drawn from: within each part (weighted by its repeated records), or pooled."""
    sets, pooled = LABELS_OF[name]
    if pooled:
        return macro_f1(sets(again), sets(views))
    drawn_from = parts(views)
    found = [
        (macro_f1(sets(group), sets(drawn_from[part])), len(group))
        for part, group in parts(again).items()
    ]
    defined = [(value, n) for value, n in found if value is not None]
    return sum(v * n for v, n in defined) / sum(n for _, n in defined) if defined else None


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_resample_equals_the_records_repeated(name: str, seed: int) -> None:
    views = records(name)
    conversations = sorted({v.record.conversation_id for v in views})
    index = {cid: i for i, cid in enumerate(conversations)}
    cluster = np.array([index[v.record.conversation_id] for v in views], dtype=np.int64)
    counts = np.random.default_rng(seed).integers(0, 4, size=len(conversations))
    metric = METRICS.get(name)
    weights = Weights(counts.reshape(1, -1).astype(np.float64), cluster)
    resampled = float(metric.evaluate(views, weights)[1][0])
    again = repeated(views, counts, cluster)
    direct, by_hand = metric.value(again), INDEPENDENT[name](again)
    if name in LABELS_OF:  # the labels and corrections of the items drawn from
        expected = resampled_macro_f1(name, again, views)
        assert expected is not None and resampled == pytest.approx(expected, rel=1e-9)
        return  # its ratio bias reads the clusters: items as clusters are another sample
    if undefined(direct):
        assert undefined(resampled) and undefined(by_hand), (resampled, by_hand)
        return
    assert resampled == pytest.approx(direct, rel=1e-9, abs=1e-12)
    assert by_hand == pytest.approx(direct, rel=1e-9, abs=1e-12)
    # the per-item form says the same as the per-cluster one
    per_item = Weights.of_items(counts[cluster].astype(float))
    assert float(metric.evaluate(views, per_item)[1][0]) == pytest.approx(
        direct, rel=1e-9, abs=1e-12
    )
