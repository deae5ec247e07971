"""What a task class declares once: its gold and prediction types come from its
`Task[Gold, Prediction]` base, the pair tasks share one check of their options, and the
trivial references group items one way for every task."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

import pytest
from task_harness import make_task

from attunebench.frozen import Frozen
from attunebench.tasks.base import Gold, Guess, Scored, Task
from attunebench.tasks.behavior import BehaviorGold, BehaviorPrediction, BehaviorTask
from attunebench.tasks.emotion import EmotionGold, EmotionPrediction
from attunebench.tasks.helpers.grouping import Grouped, Shown, group_references
from attunebench.tasks.helpers.pairs import PairGold
from attunebench.tasks.judge_audit import JudgeAuditTask
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
    assert list(EmotionGold.model_fields)[:8] == [
        "level",
        "derived",
        "part",
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
    reported: str | None = None

    def what_shows(self) -> Shown:
        return Shown(self.shown, self.chars, self.reported)


def test_group_references_group_train_items_by_nothing_position_length_and_report() -> None:
    # A group's usual answer that says which train items are in it, so each reference shows
    # what it grouped by.
    def members(golds: Sequence[Sized], constant: bool) -> str:
        return "all" if constant else ",".join(str(g.chars) for g in golds)

    def guess(usual: str, gold: Sized) -> Guess:
        return ToyPrediction(answer=usual), Scored(None)

    grouped = Grouped(members, guess)
    refs = group_references(grouped, Sized.what_shows)
    train = [Sized(shown=10 - i % 5, chars=100 * i) for i in range(10)]

    def groups(name: str, items: Sequence[Sized], context: str = "blind") -> list[str]:
        reference = group_references(grouped, Sized.what_shows, context)[name]  # type: ignore[arg-type]
        assert reference.fit is not None
        return [
            g[0].model_dump()["answer"] for g in reference.guess(reference.fit(train), items) if g
        ]

    assert set(refs) == {"reference/constant", "reference/position-only", "reference/length-only"}
    assert groups("reference/constant", train[:2]) == ["all", "all"]
    # an item's group is the train items showing as many messages; none shows 3: the constant
    unseen = Sized(shown=3, chars=0)
    assert groups("reference/position-only", [train[0], unseen]) == ["0,500", "all"]
    # the quintile edges are the train lengths': ten growing lengths, two to a quintile
    assert groups("reference/length-only", [train[3], Sized(shown=0, chars=10**6)]) == [
        "200,300",
        "800,900",
    ]
    # the informed context adds the group of the last self-report the prompt shows
    assert "reference/self-report" not in refs
    told = [t.model_copy(update={"reported": "sad|4" if t.chars < 500 else None}) for t in train]
    train[:] = told
    assert groups("reference/self-report", [told[0], told[9]], "informed") == [
        "0,100,200,300,400",
        "500,600,700,800,900",
    ]


def test_a_gold_says_what_its_prompt_shows_and_equal_golds_share_one_key() -> None:
    """Messages shown fall in their bin (-1: not recorded), a length not recorded is 0; golds
    that show the same share one key, and one that shows other messages does not."""
    gold = EmotionGold(primary="joy", visible=8, chars=42, reported="sad 2")
    assert gold.shown() == Shown(2, 42, "sad 2")  # 7 <= 8 < 10: the second edge's bin
    assert BehaviorGold(behaviors=()).shown() == Shown(-1, 0, None)
    assert EmotionGold(primary="fear", visible=8, chars=42, reported="sad 2").shown() is (
        gold.shown()
    )
    assert EmotionGold(visible=3, chars=42, reported="sad 2").shown() == Shown(0, 42, "sad 2")
