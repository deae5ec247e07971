"""Judge agreement per judge and variant: the `judge_audit` task's declared metrics, with
intervals from the shared resamples; undefined statistics are null with a reason."""

from __future__ import annotations

import numpy as np
import pytest

from attunebench.analysis.bootstrap import ClusterBootstrap, Minimum
from attunebench.analysis.cells import build_cell
from attunebench.analysis.frame import Frame
from attunebench.analysis.judges.audit import judge_agreement
from attunebench.analysis.provenance import Roster
from attunebench.analysis.schema import JudgeAgreement
from attunebench.records import ItemRecord
from attunebench.tasks import load_tasks
from attunebench.tasks.helpers.pairs import PairGold
from attunebench.tasks.preference import PreferencePrediction
from planted import synthetic
from planted.synthetic import JUDGE, Plan

AUDIT_TASK = "judge_audit"


def agreement(records: list[ItemRecord]) -> list[JudgeAgreement]:
    frame = Frame.from_records(records)
    bootstrap = ClusterBootstrap.create(
        np.arange(len(frame.conversations)), 500, np.random.default_rng(0)
    )
    minimum = Minimum(5, "conversation", bootstrap.cluster_of)
    cells = {
        (AUDIT_TASK, variant): build_cell(frame, AUDIT_TASK, variant, all_items=False)
        for variant in frame.task_variants(AUDIT_TASK)
    }
    return judge_agreement(frame, bootstrap, Roster({}), cells, minimum)


def audited(accuracy: float, conversations: int = 40) -> list[ItemRecord]:
    plan = Plan({"m/a": {"emotion": 0.5}}, conversations=conversations, judge_accuracy=accuracy)
    return [r for r in synthetic.runs(plan).records if r.task == AUDIT_TASK]


def test_the_judge_is_labelled_and_its_statistics_are_the_tasks_metrics() -> None:
    records = audited(0.8)
    (found,) = agreement(records)
    assert (found.judge, found.judge_kind, found.variant) == (JUDGE, "proxy", "informed")
    assert found.n == len(records) and found.n_failed == 0 and found.n_conversations == 40
    accuracy = found.accuracy
    assert accuracy.value == pytest.approx(np.mean([r.score for r in records]))
    assert accuracy.ci_low is not None and accuracy.ci_high is not None
    assert accuracy.ci_low < accuracy.value < accuracy.ci_high
    task = load_tasks().get(AUDIT_TASK)()
    views = [task.scoring.view(r) for r in records]
    metrics = {m.name: m for m in task.scoring.metrics}
    for name in ("agreement", "kappa", "flip_rate", "longer_win_share"):
        estimate = getattr(found, name)
        assert estimate.value == pytest.approx(metrics[name].value(views)), name


def test_too_few_conversations_keep_the_values_without_intervals() -> None:
    (found,) = agreement(audited(0.8, conversations=3))
    assert found.accuracy.value is not None and found.accuracy.ci_low is None
    assert found.accuracy.reason is not None
    assert found.accuracy.reason.startswith("only 3 conversations with scored items")


def test_undefined_statistics_are_null_with_a_reason() -> None:
    # every pair has equal lengths and the participant always picked the first reply
    records = []
    for i in range(8):
        gold = PairGold(
            first="r1",
            second="r2",
            chosen="r1",
            first_turn=i,
            second_turn=i,
            len_first=20,
            len_second=20,
        )
        records.append(
            ItemRecord(
                task=AUDIT_TASK,
                model="proxy/j",
                conversation_id=f"c{i % 4}",
                turn_index=i,
                item_id="r1~r2",
                variant="informed",
                status="ok",
                gold=gold.model_dump(mode="json"),
                prediction=PreferencePrediction(ab="r1", ba="r1").model_dump(mode="json"),
                score=1.0,
                scores={"agree_ab": 1.0, "agree_ba": 1.0, "consistent": 1.0},
            )
        )
    (found,) = agreement(records)
    assert found.accuracy.value == 1.0
    assert found.longer_win_share.value is None and found.longer_win_share.reason
    assert found.kappa.value is None and found.kappa.reason  # one label only: p_e = 1
