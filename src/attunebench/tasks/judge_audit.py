"""`judge_audit`: the judge itself, run on the participants' own A/B pairs, as MT-Bench
measured judge-human agreement but against the person the replies were written for (which
pairs, and why: docs/tasks.md, paragraph "Judge audit across turns"); the statistics are in
`tasks.helpers.audit`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attunebench import tasks
from attunebench.judge.forms import PAIRWISE_ANSWERS
from attunebench.stats import FloatArray
from attunebench.tasks import preference
from attunebench.tasks.helpers import audit, history, judging, metrics, pair_cues, pairs

TASK = "judge_audit"
DEFAULT_CONTEXT = "both"


AuditView = tasks.View[pairs.PairGold, preference.PreferencePrediction]


def counts(views: Sequence[AuditView]) -> FloatArray:
    rows = []
    for view in views:
        guess = view.prediction
        named = [] if guess is None else [x for x in (guess.ab, guess.ba) if x is not None]
        rows.append(audit.audit_counts(view.status, view.score, view.gold, named))
    return np.array(rows).reshape(len(rows), audit.WIDTH)


class JudgeAuditScoring(preference.PairScoring):
    headline = "judge accuracy (consistent in both orders and as the participant picked)"

    def choice_gold(self, item: tasks.Item[pairs.PairGold], query: tasks.Query) -> str | None:
        gold = preference.shown_gold(item.gold, query.key)
        return None if gold == pairs.TIE else gold

    def references(
        self, context: history.ContextMode = "blind"
    ) -> dict[str, tasks.Reference[pairs.PairGold]]:
        return {"reference/longer-reply": preference.picks(pair_cues.longer)}

    metrics = metrics.register(
        TASK,
        metrics.column_metric("score", headline),
        *audit.audit_metrics(counts),
        *tasks.calibration_metrics(preference.pair_calibration_rows, positive="first"),
    )


@tasks.register_task(TASK)
class JudgeAuditTask(preference.PairTask, scoring=JudgeAuditScoring):
    """The judge on the participants' own pairs, in both orders; needs at least one `--judge`.

    `participant_context`: informed, blind, or both."""

    name = TASK
    # The evaluated "models" are the judges, asked for pairwise verdicts: a judge that gives
    # none is left out of this task (not applicable), like a subject model elsewhere.
    subject_forms = (PAIRWISE_ANSWERS,)
    evaluates = "judges"
    needs_judge = True
    per_order = "agree"
    templates = (judging.PAIRWISE, judging.PAIRWISE_CHOICE)

    def __init__(
        self,
        participant_context: str = DEFAULT_CONTEXT,
        derive_from_ratings: bool = True,
        max_derived_pairs: int = pairs.DEFAULT_DERIVED_CAP,
        include_flagged: bool = False,
        seed: int = 0,
    ) -> None:
        options = pairs.PairOptions(
            derive_from_ratings, max_derived_pairs, seed, include_flagged, same_turn_only=True
        )
        super().__init__(participant_context, options)

    def queries(
        self, item: tasks.Item[pairs.PairGold], mode: tasks.AnswerMode
    ) -> list[tasks.Query]:
        _, upto, replies = self.in_orders(item)
        turn = history.turn_at(item.conversation, upto)
        profile = judging.profile_of(item.conversation, turn, informed=item.context == "informed")
        context = judging.JudgeContext.at(item.conversation, upto, profile)
        return [judging.pairwise_query(context, a, b, order) for order, (a, b) in replies.items()]

    def letter(self, text: str) -> str:
        return str(judging.parse_pairwise(text)["winner"])

    def score(
        self, item: tasks.Item[pairs.PairGold], prediction: preference.PreferencePrediction
    ) -> tasks.Scored:
        values = preference.both_orders(
            prediction.ab or "", prediction.ba or "", item.gold.key
        ).values
        agrees = values["consistent"] == 1.0 and values["correct_ab"] == 1.0
        named = {f"agree_{order}": values[f"correct_{order}"] for order in preference.ORDERS}
        return tasks.Scored(float(agrees), {**named, "consistent": values["consistent"]})
