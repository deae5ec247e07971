"""What a task class declares once: its gold and prediction types come from its
`Task[Gold, Prediction]` base, the pair tasks share one check of their options, and the
trivial references group items one way for every task."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

import pytest
from task_harness import make_task

from attunebench.frozen import Frozen
from attunebench.tasks.base import Gold, Guess, Scored, Task
from attunebench.tasks.behavior import BehaviorGold, BehaviorPrediction, BehaviorTask
from attunebench.tasks.emotion import EmotionGold, EmotionPrediction
from attunebench.tasks.grouping import group_references
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


class Sized(Gold):
    shown: int
    chars: int


def test_group_references_group_by_nothing_position_and_length_quintile() -> None:
    # A guess that reports the key it was given, so each reference shows what it grouped by.
    def keys_as_guesses(
        items: Sequence[tuple[str, Sized]], keys: Sequence[Hashable]
    ) -> list[Guess]:
        return [(ToyPrediction(answer=str(key)), Scored(None)) for key in keys]

    refs = group_references(keys_as_guesses, lambda g: g.shown, lambda g: g.chars)
    items = [(f"c{i}", Sized(shown=10 - i, chars=100 * i)) for i in range(10)]

    def keys(name: str) -> list[str]:
        return [g[0].model_dump()["answer"] for g in refs[name](items) if g is not None]

    assert set(refs) == {"reference/constant", "reference/position-only", "reference/length-only"}
    assert keys("reference/constant") == ["0"] * 10
    assert keys("reference/position-only") == [str(10 - i) for i in range(10)]
    # Ten growing lengths fall two to a quintile, in order; not the raw lengths.
    assert keys("reference/length-only") == [str(i // 2) for i in range(10)]
