"""Simulated studies of macro-F1 with a planted truth: how often its interval holds the truth,
and how far its estimate lies from it on average.

Four designs, each drawn as real corpora are shaped:

- `emotion_1`: one label per conversation, the 11 emotion types with ESConv train's shares
  (910 conversations; three labels seen once). The model is right with probability
  expit(0.5 + N(0, 1)), drawn per conversation; otherwise it names another label, drawn in
  proportion to the square root of its share.
- `emotion_turns`: 10 items per conversation over 8 labels with shares from 0.45 to 0.02,
  each conversation with its own mix, Dirichlet(20 x shares); the same model.
- `multi_label`: replies labelled with ESConv's 8 strategies (the behavior task's labels),
  with MultiESC test's numbers of labelled replies per conversation, labels per reply and
  label shares. The model names each of a reply's labels with its conversation's probability
  (as above) and, otherwise, one label the reply lacks (square root of its share).

- `two_parts`: a design pooled from two corpus parts with their own labels, half of the
  conversations drawn as `emotion_1`, half as `emotion_turns` (a suite's ESConv and
  Topical-Chat emotion items); macro-F1 is read within each part and averaged over the parts,
  each weighted by its items (`tasks.helpers.metrics.within_parts`), as the headline is.

The truth comes from one very large draw: each label's F1 from the counts of millions of
items. The estimand is macro-F1 over the labels of the data's gold (`tasks.helpers.metrics`), so a
study's truth is the mean of the population's per-label F1 over the labels its own gold holds
(within each part, the parts weighted by the study's items in each, for `two_parts`);
`every_label` gives the same figures against the mean over every label of the population,
which labels a study never sees make unreachable. The estimate and its interval are the
analysis's own: `macro_f1_statistic` on a cluster bootstrap's counts, the expanded percentile
interval, widened to the jackknife's (`bootstrap.jackknife_widened`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.special import expit

from attunebench.analysis.bootstrap import DEFAULT_RESAMPLES, ClusterBootstrap, jackknife_widened
from attunebench.stats import FloatArray, IntArray, Weights
from attunebench.tasks.helpers.metrics import macro_f1_statistic, per_label, within_parts

# ESConv train's emotion types, by conversations (anxiety, depression, sadness, anger, fear,
# disgust, shame, nervousness, guilt, jealousy, pain).
ESCONV_EMOTIONS = (251, 234, 220, 74, 70, 29, 23, 6, 1, 1, 1)
TURN_SHARES = (0.45, 0.20, 0.12, 0.08, 0.06, 0.04, 0.03, 0.02)
TURN_ITEMS, TURN_CONCENTRATION = 10, 20.0
# MultiESC test: the 8 strategies' replies (Question, Providing Suggestions, Others,
# Affirmation and Reassurance, Self-disclosure, Reflection of feelings, Information,
# Restatement or Paraphrasing), labelled replies per conversation, and labels per reply.
MULTIESC_STRATEGIES = (546, 484, 425, 422, 253, 230, 177, 150)
MULTIESC_REPLIES = {
    5: 1,
    6: 4,
    7: 1,
    8: 16,
    9: 30,
    10: 38,
    11: 28,
    12: 21,
    13: 15,
    14: 10,
    15: 7,
    16: 4,
    17: 5,
    18: 4,
    19: 1,
    20: 1,
    21: 2,
    22: 2,
    24: 1,
    25: 3,
    36: 1,
}
MULTIESC_LABELS_PER_REPLY = (1932, 336, 25, 2)
ACCURACY_LOGIT, ACCURACY_SPREAD = 0.5, 1.0
SIZES = (10, 20, 50)
# The very large draw: ten times more for emotion_1, whose rarest labels are 0.1% of it.
TRUTH_CONVERSATIONS = {
    "emotion_1": 2_000_000,
    "emotion_turns": 200_000,
    "multi_label": 200_000,
    "two_parts": 2_000_000,
}
TRUTH_CHUNK = 20_000

Draw = Callable[[np.random.Generator, int], tuple[FloatArray, IntArray]]


def _shares(counts: Sequence[float]) -> FloatArray:
    found = np.asarray(counts, dtype=np.float64)
    shares: FloatArray = found / found.sum()
    return shares


def _accuracy(rng: np.random.Generator, conversations: int) -> FloatArray:
    drawn: FloatArray = expit(ACCURACY_LOGIT + ACCURACY_SPREAD * rng.normal(size=conversations))
    return drawn


def _other_label(rng: np.random.Generator, excluded: np.ndarray, shares: FloatArray) -> IntArray:
    """Per row, a label not `excluded` (rows x labels, bool), drawn in proportion to the
    square root of its share (the Gumbel-max trick)."""
    keys = 0.5 * np.log(shares) + rng.gumbel(size=excluded.shape)
    picked: IntArray = np.where(excluded, -np.inf, keys).argmax(axis=1)
    return picked


def _rows(gold: np.ndarray, predicted: np.ndarray) -> FloatArray:
    """[TP per label, FP per label, FN per label] from (items x labels) boolean sets."""
    return np.concatenate([gold & predicted, predicted & ~gold, gold & ~predicted], axis=1).astype(
        np.float64
    )


def _single(
    rng: np.random.Generator, gold: IntArray, right: np.ndarray, shares: FloatArray
) -> FloatArray:
    labels = np.arange(len(shares))
    gold_sets = gold[:, None] == labels[None, :]
    named = np.where(right, gold, _other_label(rng, gold_sets, shares))
    return _rows(gold_sets, named[:, None] == labels[None, :])


def emotion_1(rng: np.random.Generator, conversations: int) -> tuple[FloatArray, IntArray]:
    shares = _shares(ESCONV_EMOTIONS)
    gold = rng.choice(len(shares), size=conversations, p=shares)
    right = rng.random(conversations) < _accuracy(rng, conversations)
    return _single(rng, gold, right, shares), np.arange(conversations)


def emotion_turns(rng: np.random.Generator, conversations: int) -> tuple[FloatArray, IntArray]:
    shares = _shares(TURN_SHARES)
    mix = rng.dirichlet(TURN_CONCENTRATION * shares, size=conversations)
    draws = rng.random((conversations, TURN_ITEMS, 1))
    gold = (draws > np.cumsum(mix, axis=1)[:, None, :]).sum(axis=2).clip(max=len(shares) - 1)
    right = rng.random((conversations, TURN_ITEMS)) < _accuracy(rng, conversations)[:, None]
    cluster = np.repeat(np.arange(conversations), TURN_ITEMS)
    return _single(rng, gold.ravel(), right.ravel(), shares), cluster


def multi_label(rng: np.random.Generator, conversations: int) -> tuple[FloatArray, IntArray]:
    shares = _shares(MULTIESC_STRATEGIES)
    replies = np.array(list(MULTIESC_REPLIES))
    counts = rng.choice(replies, size=conversations, p=_shares(list(MULTIESC_REPLIES.values())))
    cluster = np.repeat(np.arange(conversations), counts)
    items = len(cluster)
    per_reply = _shares(MULTIESC_LABELS_PER_REPLY)
    size = 1 + rng.choice(len(per_reply), size=items, p=per_reply)
    # `size` labels without replacement in proportion to their shares (Gumbel top-k)
    keys = np.log(shares) + rng.gumbel(size=(items, len(shares)))
    rank = (-keys).argsort(axis=1).argsort(axis=1)
    gold = rank < size[:, None]
    accuracy = _accuracy(rng, conversations)[cluster]
    named = gold & (rng.random(gold.shape) < accuracy[:, None])
    missed = rng.random(items) >= accuracy
    extra = _other_label(rng, gold, shares)
    named[np.flatnonzero(missed), extra[missed]] = True
    return _rows(gold, named), cluster


def _side_by_side(first: FloatArray, second: FloatArray) -> FloatArray:
    """The rows of two parts with disjoint labels, the first part's labels first: each part's
    items count nothing for the other's labels."""
    out = []
    for one, other in zip(np.split(first, 3, axis=1), np.split(second, 3, axis=1), strict=True):
        top = np.hstack([one, np.zeros((len(first), other.shape[1]))])
        bottom = np.hstack([np.zeros((len(second), one.shape[1])), other])
        out.append(np.vstack([top, bottom]))
    return np.hstack(out)


def two_parts(rng: np.random.Generator, conversations: int) -> tuple[FloatArray, IntArray]:
    """Half the conversations from a part drawn as `emotion_1` (ESConv), half from one drawn
    as `emotion_turns` (a corpus labelled at every turn, as Topical-Chat is), each with its
    own labels: a suite's emotion items."""
    half = conversations // 2
    first, first_cluster = emotion_1(rng, half)
    second, second_cluster = emotion_turns(rng, conversations - half)
    cluster = np.concatenate([first_cluster, second_cluster + half])
    return _side_by_side(first, second), cluster


DESIGNS: dict[str, Draw] = {
    "emotion_1": emotion_1,
    "emotion_turns": emotion_turns,
    "multi_label": multi_label,
    "two_parts": two_parts,
}
# The designs pooled from corpus parts: each label's part (by its column), and each item's
# part from its conversation's number (of how many a study draws).
PART_LABELS: dict[str, IntArray] = {
    "two_parts": np.repeat([0, 1], [len(ESCONV_EMOTIONS), len(TURN_SHARES)]),
}
PART_OF: dict[str, Callable[[IntArray, int], IntArray]] = {
    "two_parts": lambda cluster, conversations: (cluster >= conversations // 2).astype(np.int64),
}


@cache
def truth(design: str, seed: int = 0, conversations: int | None = None) -> FloatArray:
    """Each label's F1 in one very large draw of the design (its counts summed in chunks)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 31]))
    conversations = conversations or TRUTH_CONVERSATIONS[design]
    total: FloatArray | None = None
    for start in range(0, conversations, TRUTH_CHUNK):
        rows, _ = DESIGNS[design](rng, min(TRUTH_CHUNK, conversations - start))
        total = rows.sum(axis=0) if total is None else total + rows.sum(axis=0)
    assert total is not None
    f1: FloatArray = per_label(total)[0]
    return f1


@dataclass(frozen=True)
class Study:
    """One simulated study: the estimate, its interval and the truths it is held against."""

    point: float
    low: float
    high: float
    truth: float  # over the labels of the study's gold
    every_label: float  # over every label of the population


def study(
    design: str, conversations: int, rng: np.random.Generator, resamples: int, truths: FloatArray
) -> Study:
    rows, cluster = DESIGNS[design](rng, conversations)
    bootstrap = ClusterBootstrap.create(np.arange(conversations), resamples, rng)
    weights: Weights = bootstrap.weights(cluster)
    parts = PART_OF[design](cluster, conversations) if design in PART_OF else None
    statistic = macro_f1_statistic if parts is None else within_parts(macro_f1_statistic)
    values = rows if parts is None else np.hstack([parts[:, None].astype(np.float64), rows])
    point = float(statistic(values, weights.unit())[0])
    drawn = statistic(values, weights)
    low, high = bootstrap.interval(drawn[:, None], conversations)
    leave_one_out = statistic(values, weights.leave_one_out())
    wide = jackknife_widened(point, low[0], high[0], drawn, leave_one_out, (0.0, 1.0))
    return Study(point, *wide, *_truths(design, rows, parts, truths))


def _truths(
    design: str, rows: FloatArray, parts: IntArray | None, truths: FloatArray
) -> tuple[float, float]:
    """The estimand over the labels of the study's gold, and over every label: within each
    part, averaged over the parts weighted by the study's items in each (`within_parts`)."""
    labels = PART_LABELS.get(design, np.zeros(len(truths), dtype=np.int64))
    parts = np.zeros(len(rows), dtype=np.int64) if parts is None else parts
    found, every, sizes = [], [], []
    for part in np.unique(parts).tolist():
        tp, _, fn = np.split(rows[parts == part].sum(axis=0), 3)
        held = ((tp + fn) > 0) & (labels == part)
        found.append(truths[held].mean())
        every.append(truths[labels == part].mean())
        sizes.append(float((parts == part).sum()))
    return float(np.average(found, weights=sizes)), float(np.average(every, weights=sizes))


@dataclass(frozen=True)
class Cell:
    """Coverage and bias of `studies` studies of one design and size."""

    coverage: float
    bias: float
    every_label_coverage: float
    every_label_bias: float


def summarise(found: Sequence[Study]) -> Cell:
    point = np.array([s.point for s in found])
    low, high = np.array([s.low for s in found]), np.array([s.high for s in found])
    truth_of = np.array([s.truth for s in found])
    every = np.array([s.every_label for s in found])
    return Cell(
        coverage=float(np.mean((low <= truth_of) & (truth_of <= high))),
        bias=float(np.mean(point - truth_of)),
        every_label_coverage=float(np.mean((low <= every) & (every <= high))),
        every_label_bias=float(np.mean(point - every)),
    )


def coverage(
    designs: Sequence[str] = tuple(DESIGNS),
    sizes: Sequence[int] = SIZES,
    *,
    studies: int = 1000,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    truth_conversations: int | None = None,
) -> dict[str, dict[int, Cell]]:
    """Design -> conversations -> the share of `studies` studies whose 95% interval held the
    truth, and the mean error of the estimate (seeded per design and size)."""
    out: dict[str, dict[int, Cell]] = {}
    for d, design in enumerate(designs):
        truths = truth(design, seed, truth_conversations)
        streams = np.random.SeedSequence([seed, d]).spawn(len(sizes))
        out[design] = {}
        for size, stream in zip(sizes, streams, strict=True):
            rng = np.random.default_rng(stream)
            found = [study(design, size, rng, resamples, truths) for _ in range(studies)]
            out[design][size] = summarise(found)
    return out
