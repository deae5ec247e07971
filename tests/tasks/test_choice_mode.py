"""Choice mode: every task's choice questions have single-character keys, and option
probabilities are read into the task's prediction: the most probable label, the yes/no
threshold, the expected value and most probable digit. A choice answer is never invalid."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from task_harness import Harness, conversation, make_task, rated_turn, two_reply_turn, views

from attunebench.answerform import TaskHint
from attunebench.data.schema import Conversation, RatingScale, State
from attunebench.models.base import Message
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Item, Output
from attunebench.tasks.helpers.metrics import METRICS

TASKS = load_tasks()
CHOICE_TASKS = [n for n in TASKS.names() if "choice" in TASKS.get(n)().answer_modes]


def feedback() -> Conversation:
    turns = [
        rated_turn(i, None).model_copy(update={"feedback": float(1 + i % 5) if i % 2 else None})
        for i in range(6)
    ]
    return conversation(turns, cid="feedback", rating_scale=RatingScale(low=1, high=5))


def items_of(name: str, sample: list[Conversation]) -> list[Item[Any]]:
    return list(make_task(name).items([*sample, feedback()]))


def test_a_task_that_asks_for_a_reply_has_no_choice_form() -> None:
    assert "response" not in CHOICE_TASKS  # it writes a reply
    assert {"emotion", "preference", "rating"} <= set(CHOICE_TASKS)


@pytest.mark.parametrize("name", CHOICE_TASKS)
def test_every_choice_query_has_single_character_keys(
    name: str, sample: list[Conversation]
) -> None:
    task = make_task(name)
    items = items_of(name, sample)
    assert items
    for item in items:
        queries = task.queries(item, "choice")
        assert queries, item.key
        for query in queries:
            form = query.choice
            assert form is not None, (item.key, query.key)
            assert form.keys and all(len(key) == 1 for key in form.keys), form.keys
            assert len(set(form.keys)) == len(form.keys) == len(form.labels)
            last = form.messages[-1].content
            assert all(key in last for key in form.keys)
            # the same question as in generate mode, up to the options: the conversation too
            assert "</conversation>" in last


def spread_for(keys: Sequence[str], rng: random.Random) -> dict[str, float]:
    """A random distribution over the keys, some of them with no mass at all."""
    weights = [rng.random() ** 3 if rng.random() > 0.3 else 0.0 for _ in keys]
    weights[rng.randrange(len(keys))] += 0.01
    total = sum(weights)
    return {k: w / total for k, w in zip(keys, weights, strict=True)}


def random_spread(messages: Sequence[Message], keys: Sequence[str], hint: TaskHint | None) -> Any:
    assert hint is not None
    return spread_for(keys, random.Random(hint.item_key))


@pytest.mark.parametrize("name", CHOICE_TASKS)
async def test_a_choice_answer_is_never_invalid(name: str, sample: list[Conversation]) -> None:
    task = make_task(name)
    items = items_of(name, sample)
    harness = Harness.choosing(m=random_spread)
    records = await harness.evaluate_all(task, items, "m", ["m"], mode="choice")
    assert {r.status for r in records} == {"ok"}, [r.error for r in records if r.error]
    assert all(r.mode == "choice" and r.distributions for r in records)
    assert all(c.output.probabilities is not None for c in harness.calls)


def fixed(table: dict[str, dict[str, float]]) -> Any:
    """Probabilities by query key (the last part of the hint's item key)."""

    def spread(messages: Sequence[Message], keys: Sequence[str], hint: TaskHint | None) -> Any:
        assert hint is not None
        return table[hint.item_key.rpartition("|")[2]]

    return spread


async def test_emotion_picks_the_most_probable_label() -> None:
    conv = conversation([sad_turn()])
    task = make_task("emotion")
    (item,) = task.items([conv])
    label_query = next(q for q in task.queries(item, "choice") if q.key == "label")
    assert label_query.choice is not None
    keys, labels = label_query.choice.keys, label_query.choice.labels
    assert labels == tuple(label.name for label in item.taxonomy.emotions)
    sadness = keys[labels.index("sadness")]
    label_p = {k: 0.02 for k in keys}
    label_p[sadness] = 0.5
    label_p[keys[labels.index("anxiety")]] = 0.2
    intensity = {"1": 0.0, "2": 0.1, "3": 0.2, "4": 0.3, "5": 0.4}
    harness = Harness.choosing(m=fixed({"label": label_p, "intensity": intensity}))
    record = await harness.evaluate(task, item, "m", mode="choice")
    prediction = record.prediction or {}
    assert record.status == "ok" and prediction["primary"] == "sadness"
    assert record.score == 1.0
    assert prediction["intensity"] == pytest.approx(0.2 + 0.6 + 1.2 + 2.0)
    assert prediction["label_probabilities"]["anxiety"] == pytest.approx(0.2)
    assert record.scores["intensity_abs_error"] == pytest.approx(abs(4.0 - 4))
    assert "valence_abs_error" not in record.scores  # not asked in choice form


def sad_turn() -> Any:
    return two_reply_turn(
        0, "Everything is falling apart.", state=State(primary="sadness", intensity=4)
    )


async def test_preference_reads_both_orders_and_the_position_probability() -> None:
    task = make_task("preference")
    conv = conversation([sad_turn()])
    (item,) = task.items([conv])  # the data's first reply "a" was chosen
    table = {"ab": {"A": 0.7, "B": 0.2, "C": 0.1}, "ba": {"A": 0.6, "B": 0.3, "C": 0.1}}
    harness = Harness.choosing(m=fixed(table))
    record = await harness.evaluate(task, item, "m", mode="choice")
    prediction = record.prediction or {}
    # ab shows a as A: picks a; ba shows b as A: picks b
    assert (prediction["ab"], prediction["ba"]) == ("a", "b")
    assert (prediction["ab_letter"], prediction["ba_letter"]) == ("A", "A")
    assert record.score == 0.5 and record.scores["consistent"] == 0.0
    found = views(task, [record])
    expected = (0.7 / 0.9 + 0.6 / 0.9) / 2
    assert METRICS.get("preference.first_shown_probability").value(found) == pytest.approx(expected)
    assert METRICS.get("preference.first_shown_share").value(found) == 1.0
    tie = {"ab": {"A": 0.2, "B": 0.2, "C": 0.6}, "ba": {"A": 0.1, "B": 0.3, "C": 0.6}}
    record = await Harness.choosing(m=fixed(tie)).evaluate(task, item, "m", mode="choice")
    assert (record.prediction or {})["ab"] == "tie" and record.score == 0.0


async def test_the_audited_judge_in_choice_mode() -> None:
    task = make_task("judge_audit", participant_context="blind")
    conv = conversation([sad_turn()])
    (item,) = task.items([conv])
    table = {"ab": {"A": 0.8, "B": 0.2}, "ba": {"A": 0.3, "B": 0.7}}
    record = await Harness.choosing(j=fixed(table)).evaluate(task, item, "j", ["j"], "choice")
    assert (record.prediction or {})["ab"] == (record.prediction or {})["ba"] == "a"
    assert record.score == 1.0


async def test_behavior_says_yes_from_one_half() -> None:
    task = make_task("behavior")
    turn = two_reply_turn(0, "Hi.", behaviors=(("question",), ()))
    (item,) = task.items([conversation([turn])])
    names = [label.name for label in item.taxonomy.behaviors]
    yes = {name: 0.1 for name in names}
    yes.update(question=0.5, validation=0.49, reflection=0.9)
    table = {f"label:{n}": {"A": p, "B": 1 - p} for n, p in yes.items()}
    record = await Harness.choosing(m=fixed(table)).evaluate(task, item, "m", mode="choice")
    prediction = record.prediction or {}
    assert sorted(prediction["behaviors"]) == ["question", "reflection"]
    assert prediction["yes_probabilities"]["validation"] == pytest.approx(0.49)
    assert record.score == pytest.approx(2 / 3)  # P={question, reflection}, G={question}


async def test_rating_keeps_the_expected_value_and_the_most_probable() -> None:
    task = make_task("rating")
    item = next(iter(task.items([feedback()])))
    spread = {"1": 0.1, "2": 0.1, "3": 0.1, "4": 0.6, "5": 0.1}
    # (outcome reads its digits the same way: test_outcome_rating)
    record = await Harness.choosing(m=fixed({"rating": spread})).evaluate(
        task, item, "m", mode="choice"
    )
    values = (record.prediction or {})["values"]
    assert values["rating"] == pytest.approx(0.1 + 0.2 + 0.3 + 2.4 + 0.5)
    assert (record.prediction or {})["argmax"]["rating"] == 4.0
    assert record.score == pytest.approx(1 - abs(3.5 - item.gold.rating) / 4)
    # the same parse, read directly: no invalid answer whatever the mass
    empty_top = {"1": 1.0, "2": 0.0, "3": 0.0, "4": 0.0, "5": 0.0}
    parsed = task.parse(item, {"rating": Output(probabilities=empty_top)})
    assert parsed.values["rating"] == 1.0 and parsed.argmax["rating"] == 1.0
