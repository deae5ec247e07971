"""Simulated retest studies with a planted truth: people whose own consistency is known.

Not a benchmark result: conversations are drawn at random so that tests and
`benchmarks/validity.py` can plant how consistently people answer and check that the analysis
(`analysis.references.ceiling`) recovers it. Each turn of a conversation carries a person's first
answers: an emotion check naming one label (drawn in the plan's `shares`) and a pick between two
replies (either one, or a tie at `tie_rate`). Each turn's two questions are asked again (two
probes), and a repeat answer differs from the first with probability `noise`: another label, drawn
uniformly among the others, or one of the two other picks, drawn uniformly.

Models answer the same questions and are read the same way (each task's `retests`, the reading
the analysis gives the people's repeats), so no task is named here: a model with `noise` answers
as a repeat would, with its own draws; a model at chance (noise None) never reads the item and
names a label in the gold's own shares and a reply at random.

The planted ceilings: a pick agrees with itself with probability 1 - noise (`agreement`); the
primary label's macro-F1 is that of the expected counts (`macro_f1`).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attunebench import __version__
from attunebench.analysis.loading import Run, Runs
from attunebench.analysis.references.ceiling import repeat_records
from attunebench.data.schema import (
    Conversation,
    Participant,
    Preference,
    Probe,
    Response,
    Source,
    State,
    Turn,
)
from attunebench.records import ItemRecord, ModelInfo, RunInfo
from attunebench.tasks.base import Task

LABELS = ("anxiety", "sadness", "anger", "joy", "relief", "loneliness")
SHARES = (0.35, 0.25, 0.15, 0.12, 0.08, 0.05)
PICKS = ("first", "second", "tie")


@dataclass(frozen=True)
class Plan:
    """What to draw: how many conversations and turns, how often a repeat answer differs from
    the first (`noise`), the labels' shares and the share of tied picks."""

    conversations: int = 400
    turns: int = 5
    noise: float = 0.2
    labels: tuple[str, ...] = LABELS
    shares: tuple[float, ...] = SHARES
    tie_rate: float = 0.1
    seed: int = 0


def agreement(noise: float) -> float:
    """The planted agreement of a pick with itself: 1 - noise."""
    return 1.0 - noise


def macro_f1(shares: Sequence[float], noise: float) -> float:
    """The planted macro-F1 of repeat labels against first ones, from the expected counts: a
    label of share p has true positives p(1 - e), false negatives p e and false positives
    e(1 - p)/(K - 1) (the other labels' changes, spread uniformly over the K - 1 others).

    >>> round(macro_f1((0.25, 0.25, 0.25, 0.25), 0.2), 6)  # equal shares: 1 - noise
    0.8
    """
    p = np.asarray(shares, dtype=np.float64)
    tp, fn, fp = p * (1 - noise), p * noise, noise * (1 - p) / (len(p) - 1)
    return float(np.mean(2 * tp / (2 * tp + fp + fn)))


def _drawn(plan: Plan, rng: np.random.Generator) -> str:
    """A label in the plan's shares."""
    at = int(np.searchsorted(np.cumsum(plan.shares), rng.random() * sum(plan.shares)))
    return plan.labels[min(at, len(plan.labels) - 1)]


def _other(first: str, options: Sequence[str], rng: np.random.Generator) -> str:
    others = [option for option in options if option != first]
    return others[int(rng.integers(len(others)))]


def _label(plan: Plan, first: str, noise: float | None, rng: np.random.Generator) -> str:
    if noise is None:  # at chance: a label in the gold's shares, whatever the first was
        return _drawn(plan, rng)
    return _other(first, plan.labels, rng) if rng.random() < noise else first


def _pick(first: str, noise: float | None, rng: np.random.Generator) -> str:
    if noise is None:  # at chance: either reply, never reading them
        return PICKS[int(rng.integers(2))]
    return _other(first, PICKS, rng) if rng.random() < noise else first


def _preference(pick: str) -> Preference:
    return Preference(tie=True) if pick == "tie" else Preference(chosen=pick)


def _turn(plan: Plan, index: int, rng: np.random.Generator) -> Turn:
    label = _drawn(plan, rng)
    pick = "tie" if rng.random() < plan.tie_rate else PICKS[int(rng.integers(2))]
    return Turn(
        index=index,
        user=f"Message {index} of a conversation.",
        state=State(emotions=(label,), primary=label),
        responses=(
            Response(id="first", text=f"A first reply to message {index}."),
            Response(id="second", text=f"A second reply to message {index}."),
        ),
        preference=_preference(pick),
    )


def _answers(
    plan: Plan, conversation: Conversation, noise: float | None, rng: np.random.Generator
) -> tuple[Probe, ...]:
    """Each turn's emotion check and pick answered again, with `noise` (None: at chance)."""
    probes = []
    last = conversation.turns[-1].index
    for turn in conversation.turns:
        assert turn.state is not None and turn.state.primary is not None
        assert turn.preference is not None
        label = _label(plan, turn.state.primary, noise, rng)
        first = "tie" if turn.preference.tie else str(turn.preference.chosen)
        probes.append(Probe(turn=turn.index, after=last, state=State(emotions=(label,))))
        probes.append(
            Probe(turn=turn.index, after=last, preference=_preference(_pick(first, noise, rng)))
        )
    return tuple(probes)


def people(plan: Plan) -> list[Conversation]:
    """The plan's conversations, each turn's questions asked again with the plan's noise."""
    rng = np.random.default_rng([plan.seed, 1])
    out = []
    for c in range(plan.conversations):
        conversation = Conversation(
            id=f"c{c:04d}",
            source=Source(kind="simulated", name="retest-study"),
            participant=Participant(id=f"p{c:04d}"),
            taxonomy="attunebench-default",
            turns=tuple(_turn(plan, t, rng) for t in range(plan.turns)),
        )
        probes = _answers(plan, conversation, plan.noise, rng)
        out.append(conversation.model_copy(update={"probes": probes}))
    return out


def model_records(
    plan: Plan,
    tasks: Sequence[Task[Any, Any]],
    found: Sequence[Conversation],
    model: str,
    noise: float | None,
) -> list[ItemRecord]:
    """A model's records of every task's items: its answers drawn as a repeat's (with its own
    `noise`, or at chance) and read through the task's own `retests`."""
    rng = np.random.default_rng([plan.seed, 2, zlib.crc32(model.encode())])
    asked = [c.model_copy(update={"probes": _answers(plan, c, noise, rng)}) for c in found]
    return [r for task in tasks for r in repeat_records(task, asked, model)]


def runs(plan: Plan, tasks: Sequence[Task[Any, Any]], models: Mapping[str, float | None]) -> Runs:
    """The plan's run in memory: every model (name -> its noise; None: at chance) on every
    task's items, and the people's conversations with their probes."""
    found = people(plan)
    records = [
        r for m, noise in models.items() for r in model_records(plan, tasks, found, m, noise)
    ]
    info = RunInfo(
        package_version=__version__,
        dataset="retest-study.jsonl",
        dataset_sha256="0" * 64,
        dataset_ids=["retest-study"],
        tasks=sorted({task.name for task in tasks}),
        models=[ModelInfo(spec=model) for model in models],
        seed=plan.seed,
        planned_items=len(records),
        started_at="2025-01-01T00:00:00Z",
        finished_at="2025-01-01T01:00:00Z",
        complete=True,
    )
    run = Run(Path("retest-study"), info, None, len(records))
    return Runs((run,), tuple(records), {c.id: c for c in found})
