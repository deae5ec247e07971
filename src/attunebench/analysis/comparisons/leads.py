"""Who leads each task, and by how much: the first model under test against the second.

The margin's interval comes from the resamples that gave each model's own interval, so it
reflects the pairing. Only models under test can lead: a strong baseline never "leads" a table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from attunebench.analysis.bootstrap import percentile_interval
from attunebench.analysis.provenance import Roster
from attunebench.analysis.schema import Lead, ScoreRow
from attunebench.analysis.scores import MetricScores
from attunebench.stats import none_if_nan


def no_subjects(roster: Roster) -> str:
    """Why nothing is ranked when no model of the runs is under test, and what would change it."""
    kinds = {roster.kind(name) for name in roster.entries}
    if "simulated" in kinds and not roster.include_simulated:
        return (
            "no model under test: add --include-simulated to check the machinery on "
            "the simulated models"
        )
    return (
        "no model under test: every model here is a yardstick; run a language model, or "
        "sim/oracle models with --include-simulated to check the machinery on simulated models"
    )


def task_lead(
    scores: MetricScores,
    rows: Sequence[ScoreRow],
    models: Sequence[str],
    confidence: float,
    nobody: str,
) -> Lead:
    """The leader of one task among `rows` (its headline rows of models under test)."""
    sign = 1.0 if scores.higher_is_better else -1.0
    ranked = sorted(
        (r for r in rows if r.value is not None), key=lambda r: (-sign * (r.value or 0.0), r.model)
    )
    base = Lead(task=scores.task, metric=scores.metric, variant=scores.variant)
    if not ranked:
        why = nobody if not rows else "no model under test has a value on this task"
        return base.model_copy(update={"reason": why})
    first = ranked[0]
    base = base.model_copy(update={"leader": first.model, "leader_value": first.value})
    if len(ranked) < 2:
        return base.model_copy(update={"reason": "one model under test: no runner-up"})
    second = ranked[1]
    a, b = models.index(first.model), models.index(second.model)
    margin = sign * float(scores.point[a] - scores.point[b])
    found = base.model_copy(
        update={"runner_up": second.model, "runner_up_value": second.value, "value": margin}
    )
    too_few = first.reason or second.reason
    if too_few is not None:
        return found.model_copy(update={"reason": too_few})
    drawn = sign * (scores.samples[:, a] - scores.samples[:, b])
    low, high = percentile_interval(drawn[:, None], confidence)
    low_, high_ = none_if_nan(float(low[0])), none_if_nan(float(high[0]))
    if low_ is None or high_ is None:
        return found.model_copy(update={"reason": "undefined in every resample"})
    verdict = "ahead" if low_ > 0 else "not clearly ahead"
    return found.model_copy(update={"ci_low": low_, "ci_high": high_, "verdict": verdict})


def leads(
    headlines: Mapping[str, MetricScores],
    rows: Sequence[ScoreRow],
    models: Sequence[str],
    roster: Roster,
    confidence: float,
) -> list[Lead]:
    """Per task, its leader among the models under test and the margin to the second."""
    nobody = no_subjects(roster)
    out = []
    for task, scores in sorted(headlines.items()):
        mine = [r for r in rows if r.task == task and r.headline and r.subject]
        out.append(task_lead(scores, mine, models, confidence, nobody))
    return out
