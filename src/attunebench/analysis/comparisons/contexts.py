"""Does knowing the participant's earlier self-reports change a model's score?

Each model's `informed` minus `blind` score on the items it answered both ways, with a paired
interval; a verdict only for models that read the context, and only on enough conversations.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum, paired_difference
from attunebench.analysis.comparisons.person_gap import paired_rows
from attunebench.analysis.frame import FloatArray, Frame, IntArray
from attunebench.analysis.schema import Difference, Estimate

BLIND, INFORMED = "blind", "informed"


def paired_items(
    frame: Frame, task: str, a: tuple[str, str], b: tuple[str, str]
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Scores of the items scored under both conditions `a` and `b`: a's, b's, the conversations."""

    def scored(variant: str, who: str) -> IntArray:
        model = frame.models.index(who) if who in frame.models else -1
        return np.flatnonzero(frame.cell(task, variant) & frame.scored & (frame.model == model))

    def item(i: int) -> tuple[int, int, str]:
        return int(frame.conversation[i]), frame.records[i].turn_index, frame.records[i].item_id

    left, right = paired_rows(scored(*a), scored(*b), item)
    return frame.score[left], frame.score[right], frame.conversation[left]


def describe(found: Estimate) -> str:
    side = found.side()
    if side is None:
        return "no interval"
    said = {1: "informed context helps", -1: "informed context hurts"}
    shown = f"{found.value:+.3f} [{found.ci_low:+.3f}, {found.ci_high:+.3f}]"
    return f"{said.get(side, 'no evidence of a difference')}: {shown}"


def context_differences(
    frame: Frame,
    bootstrap: ClusterBootstrap,
    reads_context: Callable[[str], bool],
    minimum: Minimum,
) -> list[Difference]:
    """Each model's informed minus blind score (`minimum`: the fewest clusters for a verdict)."""
    out = []
    for task in frame.tasks:
        if not {BLIND, INFORMED} <= set(frame.task_variants(task)):
            continue
        blind_models = set(frame.task_models(task, BLIND))
        for model in sorted(blind_models.intersection(frame.task_models(task, INFORMED))):
            informed, blind, where = paired_items(frame, task, (INFORMED, model), (BLIND, model))
            found = _difference(bootstrap, task, model, informed, blind, where)
            too_few = minimum.of(where, " with items scored in both modes")
            if not reads_context(model):
                found = found.model_copy(update={"verdict": None, "reason": _yardstick(found)})
            elif too_few is not None and found.value is not None:
                found = found.model_copy(
                    update={"verdict": None, "ci_low": None, "ci_high": None, "reason": too_few}
                )
            out.append(found)
    return out


def _yardstick(found: Difference) -> str:
    """Why a yardstick's difference gets no verdict, worded by what its interval shows: a
    baseline answers alike in both modes, but a proxy reads the context it is given."""
    side = found.side()
    if found.value == 0 and found.ci_low == 0 and found.ci_high == 0:
        shown = "its answers do not change with the context"
    elif side is None:
        shown = "no interval"
    elif side != 0:
        shown = "its score does change with the context (the interval excludes 0)"
    else:
        shown = "no clear change (the interval includes 0)"
    return f"no verdict: a yardstick, not a model under test; {shown}"


def _difference(
    bootstrap: ClusterBootstrap,
    task: str,
    model: str,
    informed: FloatArray,
    blind: FloatArray,
    conversations: IntArray,
) -> Difference:
    base = Difference(
        reason="no item scored in both modes",
        model=model,
        task=task,
        a=INFORMED,
        b=BLIND,
        n=len(informed),
        n_conversations=int(np.unique(conversations).size),
        verdict="no item scored in both modes",
    )
    if len(informed) == 0:
        return base
    found = Estimate.of(*paired_difference(bootstrap, informed, blind, conversations))
    return base.model_copy(update={**found.model_dump(), "verdict": describe(found)})
