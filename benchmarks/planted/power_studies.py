"""Does `power` state the conversations a headline needs? A planted pair, measured.

The pair: two synthetic models (`planted.synthetic`) right on 60% and 45% of the items of
each task (one emotion item a conversation, as ESConv has, and five ratings), with a
difficulty per conversation (standard deviation
0.5 on the logit scale) shared by both, so items of one conversation move together. Their
headline difference on a population of `POPULATION` conversations is the planted one (emotion's
macro-F1 and rating's position-adjusted correlation: about +0.15 each).

- `true_n80`: studies of n conversations drawn from the population (with replacement, so a
  study is n independent draws from it, however large n is beside it), each tested as the
  report tests a paired difference (its expanded percentile interval from the study's own cluster
  bootstrap, `power.study_rejects` on the pair restricted to those conversations); the power
  at n is the share that reject, and `power.conversations_for` reads off where it reaches 80%.
- pilots: draws of `PILOT` distinct conversations of the same population, each read as
  `attunebench power` reads a pilot run (`power.pair_power` on the pair's values of those
  conversations; that these are the values the report reads is tested); whether its stated
  range holds `true_n80`, and its central figure where it names one.

Pilots and studies come from one population, so its own difference is the truth they are
held to, not the plan's (a population of 2,000 conversations differs from the plan's
expectation by about 0.015).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attunebench.analysis.bootstrap import DEFAULT_CONFIDENCE
from attunebench.analysis.comparisons.differences import HeadlinePair, headline_pair, report_cell
from attunebench.analysis.comparisons.power import (
    PowerCurve,
    Settings,
    conversations_for,
    pair_power,
    study_rejects,
)
from attunebench.analysis.frame import Frame, IntArray
from attunebench.tasks.helpers.metrics import Found
from planted import synthetic

TASKS = ("emotion", "rating")
PAIR = ("m/better", "m/worse")
ACCURACY = (0.60, 0.45)
SPREAD = 0.5
ITEMS = {"emotion": 1, "rating": 5}  # one emotion a conversation, as ESConv's
POPULATION = 2000
PILOT = 30
TRUTH_SIZES = (50, 100, 150, 200, 300, 400)
# Each pilot's power: half the CLI's studies per size, each with half its resamples (cost).
PILOT_SETTINGS = Settings(simulations=200, resamples=100)
TRUTH_RESAMPLES = 500  # each study's own bootstrap: a quarter of the report's 2,000


def plan(conversations: int, seed: int) -> synthetic.Plan:
    accuracy = {model: dict.fromkeys(TASKS, a) for model, a in zip(PAIR, ACCURACY, strict=True)}
    return synthetic.Plan(
        accuracy,
        conversations=conversations,
        items=ITEMS,
        conversation_spread=SPREAD,
        seed=seed,
    )


def population(
    seed: int, conversations: int = POPULATION, tasks: Sequence[str] = TASKS
) -> dict[str, HeadlinePair]:
    """Each task's planted pair on a population of that many conversations."""
    runs = synthetic.runs(plan(conversations, seed))
    frame = Frame.from_records(runs.records)
    out = {}
    for task in tasks:
        cell = report_cell(runs, frame, task)
        pair = None if cell is None else headline_pair(frame, cell, *PAIR)
        if pair is None:
            raise ValueError(f"the planted population has no headline pair on {task}")
        out[task] = pair
    return out


@dataclass(frozen=True)
class Truth:
    difference: float
    power: dict[int, float]
    n80: float | None


def study_of(pair: HeadlinePair, chosen: IntArray) -> HeadlinePair:
    """The pair on these clusters alone, the k-th of `chosen` becoming cluster k: what the
    report reads from a study of those conversations."""
    values, owners = [], []
    for found, mine in zip(pair.values, pair.owners, strict=True):
        records, position = gather(mine, chosen, pair.clusters)
        values.append(_rows_of(found, records))
        owners.append(position)
    return HeadlinePair(
        pair.metric, (values[0], values[1]), (owners[0], owners[1]), len(chosen), len(owners[0])
    )


def gather(group: IntArray, chosen: IntArray, groups: int) -> tuple[IntArray, IntArray]:
    """The indices of the members of each chosen group (members of a group chosen twice come
    twice), in the order chosen, and the position in `chosen` each came for."""
    order = np.argsort(group, kind="stable")
    sizes = np.bincount(group, minlength=groups)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    lengths = sizes[chosen]
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    members = order[np.repeat(starts[chosen], lengths) + offsets]
    return members, np.repeat(np.arange(len(chosen)), lengths)


def _rows_of(found: Found, records: IntArray) -> Found:
    """The values of these records, in this order (rows of several-row records follow them)."""
    if not isinstance(found, tuple):
        return found[records]
    values, owners = found
    groups = int(max(owners.max(initial=-1), records.max(initial=-1))) + 1
    rows, position = gather(owners, records, groups)
    return values[rows], position


def truth(
    pair: HeadlinePair,
    studies: int,
    rng: np.random.Generator,
    sizes: Sequence[int] = TRUTH_SIZES,
    resamples: int = TRUTH_RESAMPLES,
) -> Truth:
    """The report's test on `studies` studies of each size drawn from the population."""
    power = {}
    for size in sizes:
        rejected = 0
        for _ in range(studies):
            study = study_of(pair, rng.integers(0, pair.clusters, size))
            ones = np.ones((1, size))
            rejected += int(study_rejects(study, ones, size, resamples, DEFAULT_CONFIDENCE, rng)[0])
        power[size] = rejected / studies
    n80 = conversations_for(list(power), list(power.values()), studies)
    return Truth(pair.point(), power, n80)


def pilots(
    pair: HeadlinePair, count: int, settings: Settings, rng: np.random.Generator
) -> list[PowerCurve]:
    """What `power` states from each of `count` pilots of `PILOT` distinct conversations of
    the population (read as `power` reads a run: `pair_power` on the pair's values)."""
    out = []
    for _ in range(count):
        pilot = study_of(pair, rng.choice(pair.clusters, PILOT, replace=False))
        out.append(pair_power(pilot, "", "", PAIR, rng, settings))
    return out


def holds(curve: PowerCurve, n80: float) -> bool:
    """Whether the pilot's stated range holds `n80` (an upper end it cannot state: unbounded)."""
    if curve.needed_low is None:
        return False
    high = float("inf") if curve.needed_high is None else curve.needed_high
    return curve.needed_low <= n80 <= high


@dataclass(frozen=True)
class Design:
    """How much to simulate: `studies` per size for the truth, `pilots` pilots, each pilot's
    power with `settings`, from a population of `population` conversations."""

    studies: int = 200
    pilots: int = 40
    settings: Settings = PILOT_SETTINGS
    population: int = POPULATION
    sizes: tuple[int, ...] = TRUTH_SIZES


@dataclass(frozen=True)
class Calibration:
    truth: Truth
    range_coverage: float | None  # None where the truth reached 80% at no size tried
    median_named_n: float | None
    named_share: float
    pilots: int


def calibration(design: Design, seed: int = 0) -> dict[str, Calibration]:
    """Per task: the planted pair's true conversations for 80% power, and how the pilots'
    statements hold it."""
    rng = np.random.default_rng([seed, 7])
    out = {}
    for task, pair in population(seed, design.population).items():
        known = truth(pair, design.studies, rng, design.sizes)
        curves = pilots(pair, design.pilots, design.settings, rng)
        named = [c.needed for c in curves if c.needed is not None]
        n80 = known.n80
        held = None if n80 is None else float(np.mean([holds(c, n80) for c in curves]))
        out[task] = Calibration(
            known,
            held,
            float(np.median(named)) if named else None,
            len(named) / len(curves),
            len(curves),
        )
    return out
