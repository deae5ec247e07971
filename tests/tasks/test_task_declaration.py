"""What a task class declares once: its gold and prediction types come from its
`Task[Gold, Prediction]` base, and the pair tasks share one check of their options."""

from __future__ import annotations

from typing import Generic, TypeVar

import pytest
from task_harness import make_task

from attunebench.frozen import Frozen
from attunebench.tasks.base import Gold, Task
from attunebench.tasks.behavior import BehaviorGold, BehaviorPrediction, BehaviorTask
from attunebench.tasks.emotion import EmotionGold, EmotionPrediction
from attunebench.tasks.judge_audit import JudgeAuditTask
from attunebench.tasks.pairs import PairGold
from attunebench.tasks.preference import PairTask, PreferencePrediction, PreferenceTask


class ToyGold(Gold):
    answer: str = ""


class ToyPrediction(Frozen):
    answer: str = ""


G = TypeVar("G", bound=Gold)


def test_a_task_reads_its_types_from_its_generic_base() -> None:
    assert (BehaviorTask.gold_type, BehaviorTask.prediction_type) == (
        BehaviorGold,
        BehaviorPrediction,
    )
    # Declared on the shared pair base, inherited by both pair tasks.
    for task in (PairTask, PreferenceTask, JudgeAuditTask):
        assert (task.gold_type, task.prediction_type) == (PairGold, PreferencePrediction)


def test_a_still_generic_base_names_no_types_and_its_subclass_does() -> None:
    class Half(Task[G, ToyPrediction], Generic[G]):  # G is not a type yet: nothing is set
        pass

    assert "gold_type" not in vars(Half)

    class Whole(Task[ToyGold, ToyPrediction]):
        pass

    assert (Whole.gold_type, Whole.prediction_type) == (ToyGold, ToyPrediction)


def test_the_emotion_gold_keeps_its_field_order_after_sharing_the_reading() -> None:
    # Records store golds as JSON in field order: sharing fields must not reorder them.
    assert list(EmotionGold.model_fields)[:7] == [
        "level",
        "derived",
        "primary",
        "emotions",
        "intensity",
        "valence",
        "arousal",
    ]
    assert list(EmotionPrediction.model_fields)[:5] == [
        "primary",
        "emotions",
        "intensity",
        "valence",
        "arousal",
    ]


@pytest.mark.parametrize("name", ["preference", "judge_audit"])
def test_both_pair_tasks_refuse_a_negative_cap_naming_the_option(name: str) -> None:
    with pytest.raises(ValueError, match="max_derived_pairs must be >= 0"):
        make_task(name, max_derived_pairs=-1)
    assert make_task(name, max_derived_pairs=0).options["max_derived_pairs"] == 0
