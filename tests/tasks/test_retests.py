"""Retest probes as the tasks read them: never gold and never in a prompt; the people's repeat
answers read as predictions of the items they re-ask (`Scoring.retests`); and each headline's
chance level (`Scoring.chance`)."""

from __future__ import annotations

from typing import Any

import pytest
from task_harness import make_task

from attunebench.data.jsonl import read_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation, Preference, Probe, State
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Task
from attunebench.tasks.emotion import EmotionGold
from attunebench.tasks.helpers.pairs import PairGold

CEILINGED = {"emotion", "preference"}  # the tasks whose gold a probe asks again


def _probed(conversation: Conversation, *probes: Probe) -> Conversation:
    return conversation.model_copy(update={"probes": probes})


def _first() -> Conversation:
    """The sample's first conversation: four turns with a self-report and a pick between "a"
    and "b" (turn 3 a tie)."""
    return read_conversations(sample_path())[0]


# Repeats that differ from the first answers, so a leak into a gold or a prompt shows.
LEAKS = (
    Probe(turn=0, after=2, state=State(emotions=("disgust",), primary="disgust", intensity=1)),
    Probe(turn=1, after=2, preference=Preference(chosen="a")),
)


def _asked(task: Task[Any, Any], conversations: list[Conversation]) -> list[Any]:
    """Every item's address and gold, and the messages of every query it makes."""
    out = []
    for item in task.items(conversations):
        messages = [query.messages for query in task.queries(item, "generate")]
        out.append((item.key, item.gold.model_dump(), messages))
    return out


@pytest.mark.parametrize("name", sorted(load_tasks().names()))
def test_probes_are_never_gold_nor_shown_to_a_model(name: str) -> None:
    plain = read_conversations(sample_path())
    probed = [_probed(plain[0], *LEAKS), *plain[1:]]
    task = make_task(name)
    assert _asked(task, probed) == _asked(task, plain)


@pytest.mark.parametrize("name", sorted(load_tasks().names()))
def test_only_the_tasks_whose_gold_a_probe_asks_again_read_one(name: str) -> None:
    read = list(make_task(name).scoring.retests([_probed(_first(), *LEAKS)]))
    assert bool(read) is (name in CEILINGED)


def test_emotion_reads_a_repeat_check_as_a_prediction_of_its_turn() -> None:
    task = make_task("emotion")
    first = _first()
    assert first.turns[1].state is not None and first.turns[1].state.primary == "anxiety"
    probes = (
        Probe(turn=1, after=2, state=State(emotions=("anger",))),  # the only one: the primary
        Probe(turn=2, after=3, state=State(emotions=("anxiety", "hope"), primary="anxiety")),
        Probe(turn=3, after=3, preference=Preference(tie=True)),  # a pick: not emotion's
    )
    repeats = list(task.scoring.retests([_probed(first, *probes)]))
    assert [(r.item.turn_index, r.prediction.primary) for r in repeats] == [
        (1, "anger"),
        (2, "anxiety"),
    ]
    assert [r.item.gold.primary for r in repeats] == ["anxiety", "anxiety"]  # first answers
    assert [task.score(r.item, r.prediction).score for r in repeats] == [0.0, 1.0]
    items = {item.key for item in task.items([first])}
    assert {r.item.key for r in repeats} <= items  # the items a model is asked


def test_preference_reads_a_repeat_pick_as_an_answer_in_both_orders() -> None:
    task = make_task("preference")
    first = _first()
    probes = (
        Probe(turn=0, after=1, preference=Preference(chosen="b")),  # first pick "a"
        Probe(turn=1, after=2, preference=Preference(chosen="b")),  # first pick "b"
        Probe(turn=3, after=3, preference=Preference(tie=True)),  # first a tie
        Probe(turn=2, after=3, state=State(emotions=("joy",))),  # an emotion check
    )
    repeats = list(task.scoring.retests([_probed(first, *probes)]))
    assert [(r.item.turn_index, r.prediction.ab, r.prediction.ba) for r in repeats] == [
        (0, "b", "b"),
        (1, "b", "b"),
        (3, "tie", "tie"),
    ]
    assert [task.score(r.item, r.prediction).score for r in repeats] == [0.0, 1.0, 1.0]
    assert {r.item.key for r in repeats} <= {item.key for item in task.items([first])}


def _emotion(primary: str | None) -> EmotionGold:
    return EmotionGold(primary=primary, emotions=(primary,) if primary else ())


def _pair(tie: bool) -> PairGold:
    return PairGold(
        first="a",
        second="b",
        chosen=None if tie else "a",
        tie=tie,
        first_turn=0,
        second_turn=0,
        len_first=1,
        len_second=1,
    )


def test_each_headline_declares_its_chance_level() -> None:
    emotion, preference = make_task("emotion"), make_task("preference")
    # macro-F1: 1/K for the K primary labels reported (labels named in their shares)
    assert emotion.scoring.chance([_emotion(x) for x in ("joy", "fear", "joy", None)]) == 0.5
    assert emotion.scoring.chance([_emotion(None)]) is None
    # a pick: the same reply or letter in both orders scores 0.5 where one was preferred
    assert preference.scoring.chance([_pair(False)] * 4) == 0.5
    assert preference.scoring.chance([_pair(True)] + [_pair(False)] * 4) == pytest.approx(0.4)
    assert preference.scoring.chance([_pair(True)] * 3 + [_pair(False)]) == pytest.approx(0.75)
    assert preference.scoring.chance([]) is None
    assert make_task("behavior").scoring.chance([]) is None  # no ceiling, no chance declared
