"""Simulated studies with a planted truth: how often the analysis's claims are wrong.

Two figures a reader must be able to trust, measured by simulation rather than asserted:

- `coverage`: how often a model's 95% cluster-bootstrap interval (`bootstrap`, expanded for
  few clusters) holds its true mean score, by the number of conversations. Each conversation
  has its own difficulty (a normal shift on the logit scale, shared by its items), so items of
  one conversation are correlated, as they are in real data; the true mean is the expected
  item score over conversations, integrated exactly (Gauss-Hermite quadrature).
- `false_distinct_rate`: how often the rank verdict (`ranks.verdict`) says "distinct" when
  both tasks rank the models in the same true order, per design (conversations x models):
  one reliable task and one noisy task on the same true ranking, and models that do not differ
  at all. The verdict, the split-half reliabilities, the ceiling and the rho interval are the
  analysis's own functions on the analysis's own resamples; only the permutation p-value,
  which no verdict reads, is skipped.

Both are seeded; `benchmarks/validity.py` prints them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from attunebench.analysis.agreement.ranks import (
    ceiling,
    disattenuated,
    rho_interval,
    verdict,
)
from attunebench.analysis.agreement.reliability import ConversationTable, spearman_rho, split_half
from attunebench.analysis.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    ClusterBootstrap,
    percentile_interval,
)
from attunebench.analysis.frame import FloatArray

COVERAGE_SIZES = (5, 10, 20, 50)
DESIGN_CONVERSATIONS = (10, 15, 20)
DESIGN_MODELS = (4, 8, 12)
QUADRATURE_POINTS = 80


def _true_mean(accuracy: float, spread: float) -> float:
    """E[expit(logit(accuracy) + spread x Z)], Z standard normal."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(QUADRATURE_POINTS)
    shift = np.log(accuracy / (1.0 - accuracy))
    return float((weights * expit(shift + spread * nodes)).sum() / weights.sum())


def _item_scores(
    rng: np.random.Generator, accuracy: FloatArray, conversations: int, items: int, spread: float
) -> FloatArray:
    """(conversations, models) sums of 0/1 item scores: each conversation's difficulty is
    shared by its items and by every model."""
    shift = np.log(accuracy / (1.0 - accuracy))
    difficulty = rng.normal(0.0, spread, size=(conversations, 1))
    drawn: FloatArray = rng.binomial(items, expit(shift[None, :] + difficulty)).astype(np.float64)
    return drawn


def coverage(
    sizes: Sequence[int] = COVERAGE_SIZES,
    *,
    studies: int = 2000,
    items: int = 5,
    accuracy: float = 0.7,
    spread: float = 1.0,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    expanded: bool = True,
) -> dict[int, float]:
    """Conversations -> the share of `studies` in which the 95% interval of a model's mean
    score holds the true mean (`items` 0/1 items per conversation); `expanded=False` measures
    the plain percentile interval instead, for comparison."""
    truth = _true_mean(accuracy, spread)
    confidence = DEFAULT_CONFIDENCE
    found = {}
    for size, stream in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes)), strict=True):
        rng = np.random.default_rng(stream)
        held = 0
        codes = np.repeat(np.arange(size), items)
        for _ in range(studies):
            sums = _item_scores(rng, np.array([accuracy]), size, items, spread)[:, 0]
            values = (np.arange(items)[None, :] < sums[:, None]).astype(np.float64).ravel()
            bootstrap = ClusterBootstrap.create(np.arange(size), resamples, rng)
            _, drawn = bootstrap.means(values, codes)
            low, high = (
                bootstrap.interval(drawn) if expanded else percentile_interval(drawn, confidence)
            )
            held += bool(low[0] <= truth <= high[0])
        found[size] = held / studies
    return found


@dataclass(frozen=True)
class Design:
    """One cell of simulated studies: both tasks rank `models` models in the same true order
    (`same order`: a reliable task with 4 items per conversation and wide gaps, a noisy one
    with 1 item and narrow gaps), or the models do not differ at all (`no difference`)."""

    scenario: str
    conversations: int
    models: int

    @property
    def name(self) -> str:
        return f"{self.scenario}, {self.conversations} conversations, {self.models} models"

    def accuracies(self) -> tuple[FloatArray, FloatArray]:
        rank = np.linspace(0.0, 1.0, self.models)
        if self.scenario == "no difference":
            return np.full(self.models, 0.6), np.full(self.models, 0.6)
        return 0.3 + 0.4 * rank, 0.45 + 0.1 * rank


SCENARIOS = ("same order", "no difference")
RELIABLE_ITEMS, NOISY_ITEMS = 4, 1


def designs(
    conversations: Sequence[int] = DESIGN_CONVERSATIONS, models: Sequence[int] = DESIGN_MODELS
) -> list[Design]:
    return [Design(s, n, m) for s in SCENARIOS for n in conversations for m in models]


def study_verdict(
    design: Design,
    rng: np.random.Generator,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    spread: float = 0.5,
) -> tuple[str | None, str | None]:
    """The rank verdict of one simulated study of the design, as the report gives it and as
    it would be without the minimum of conversations for "distinct"."""
    n = design.conversations
    bootstrap = ClusterBootstrap.create(np.arange(n), resamples, rng, confidence)
    points, samples, reliability = [], [], []
    for accuracy, items in zip(design.accuracies(), (RELIABLE_ITEMS, NOISY_ITEMS), strict=True):
        sums = _item_scores(rng, accuracy, n, items, spread)
        counts = np.full_like(sums, float(items))
        points.append(sums.sum(axis=0) / counts.sum(axis=0))
        samples.append((bootstrap.counts @ sums) / (bootstrap.counts @ counts))
        reliability.append(split_half(ConversationTable(sums, counts), bootstrap, rng))
    rho = rho_interval(spearman_rho, points[0], points[1], samples[0], samples[1], confidence, n)
    top, top_samples = ceiling(reliability[0], reliability[1], confidence, n)
    drawn = spearman_rho(samples[0], samples[1])
    fixed = disattenuated(rho, drawn, top, top_samples, confidence)
    return verdict(rho, top, fixed, n)[0], verdict(rho, top, fixed, n, least=0)[0]


@dataclass(frozen=True)
class FalseDistinct:
    """Per design, the share of studies that said "distinct" (all of them false), as the
    report gives the verdict and without its minimum of conversations; the worst design."""

    studies: int
    rates: dict[str, float]
    without_minimum: dict[str, float]

    @property
    def worst(self) -> tuple[str, float]:
        name = max(self.rates, key=lambda key: (self.rates[key], self.without_minimum[key]))
        return name, self.rates[name]


def false_distinct_rate(
    cells: Sequence[Design] | None = None,
    *,
    studies: int = 1000,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> FalseDistinct:
    """How often identical true rankings come out "distinct", per design (default: every
    scenario at 10, 15 and 20 conversations and 4, 8 and 12 models)."""
    rates, without = {}, {}
    chosen = designs() if cells is None else list(cells)
    streams = np.random.SeedSequence(seed).spawn(len(chosen))
    for design, stream in zip(chosen, streams, strict=True):
        rng = np.random.default_rng(stream)
        found = [study_verdict(design, rng, resamples) for _ in range(studies)]
        rates[design.name] = sum(v == "distinct" for v, _ in found) / studies
        without[design.name] = sum(v == "distinct" for _, v in found) / studies
    return FalseDistinct(studies, rates, without)
