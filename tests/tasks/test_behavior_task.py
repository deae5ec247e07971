"""The behavior task: per-reply items, per-item F1 (the one headline), and the corpus F1."""

from __future__ import annotations

from typing import Any

import pytest
from sklearn.metrics import f1_score
from sklearn.preprocessing import MultiLabelBinarizer
from task_harness import Harness, conversation, make_task, two_reply_turn, views

from attunebench.data.schema import Conversation
from attunebench.tasks.base import View
from attunebench.tasks.behavior import BehaviorGold, BehaviorPrediction, BehaviorScoring, f1
from attunebench.tasks.helpers.metrics import METRICS


def data() -> list[Conversation]:
    return [
        conversation(
            [
                two_reply_turn(
                    0,
                    "I failed my driving test.",
                    texts=("That must sting. What happened?", "You should practise more."),
                    behaviors=(("reflection", "question"), ("lecturing", "suggestion")),
                ),
                two_reply_turn(1, "Ok.", texts=("Cool.", "Right."), behaviors=(("other",), ())),
            ]
        )
    ]


async def test_items_scores_and_corpus_metrics_equal_hand_computed_values() -> None:
    task = make_task("behavior")
    items = list(task.items(data()))
    assert [(i.turn_index, i.item_id) for i in items] == [(0, "a"), (0, "b"), (1, "a")]
    scripted = {
        f"{items[0].key}|answer": '{"behaviors": ["reflection", "Question", "validation"]}',
        f"{items[1].key}|answer": '{"behaviors": ["moralizing"]}',  # a synonym of lecturing
        f"{items[2].key}|answer": '{"behaviors": ["small talk"]}',  # not a label: invalid
    }
    records = await Harness.scripted(m=scripted).evaluate_all(task, items, "m")
    # item 1: P={reflection, question, validation}, G={reflection, question}: F1 = 4/5
    assert records[0].score == pytest.approx(0.8)
    # item 2: P={lecturing}, G={lecturing, suggestion}: F1 = 2/3
    assert records[1].score == pytest.approx(2 / 3)
    assert records[1].prediction == {"behaviors": ["lecturing"], "yes_probabilities": {}}
    assert records[2].status == "invalid" and records[2].score == 0.0
    assert records[2].raw_output == '{"behaviors": ["small talk"]}'
    found = views(task, records)
    # the headline is macro-F1 (a majority guess scores low on it); per-item F1 is `score`
    assert BehaviorScoring.headline_metric == "macro_f1"
    assert METRICS.get("behavior.score").value(found) == pytest.approx((0.8 + 2 / 3 + 0) / 3)
    predicted = [{"reflection", "question", "validation"}, {"lecturing"}, set()]
    gold = [{"reflection", "question"}, {"lecturing", "suggestion"}, {"other"}]
    binarizer = MultiLabelBinarizer().fit(predicted + gold)
    y_true, y_pred = binarizer.transform(gold), binarizer.transform(predicted)
    # micro: TP=3, FP=1 (validation), FN=1 (suggestion) + 1 (other, invalid) -> 6/9
    assert METRICS.get("behavior.micro_f1").value(found) == pytest.approx(6 / 9)
    assert METRICS.get("behavior.micro_f1").value(found) == pytest.approx(
        f1_score(y_true, y_pred, average="micro")
    )
    # over the gold's labels: reflection, question, lecturing 1; suggestion, other 0;
    # validation, only predicted, is not one of them (its false positive is not averaged)
    assert METRICS.get("behavior.macro_f1").value(found) == pytest.approx(3 / 5)
    gold_labels = [i for i, label in enumerate(binarizer.classes_) if label != "validation"]
    assert METRICS.get("behavior.macro_f1").value(found) == pytest.approx(
        f1_score(y_true, y_pred, labels=gold_labels, average="macro")
    )
    assert task.scoring.label_sets(found[2]) == (frozenset(), frozenset({"other"}))


def test_two_empty_label_sets_agree() -> None:
    assert f1([], []) == 1.0 and f1(["a"], []) == 0.0 and f1(["a", "b"], ["b"]) == 2 / 3


async def test_the_reply_is_quoted_after_the_conversation() -> None:
    task = make_task("behavior")
    item = next(iter(task.items(data())))
    harness = Harness.scripted(m=lambda messages, hint: "{}")
    await harness.evaluate(task, item, "m")
    query = harness.calls[0].query
    prompt = query.messages[-1].content
    assert "<reply>\nThat must sting. What happened?\n</reply>" in prompt
    assert prompt.index("</conversation>") < prompt.index("<reply>\nThat must")
    assert "You should practise more." not in prompt  # the other candidate is not shown
    hint = query.hint
    assert hint is not None and hint.text == "That must sting. What happened?"
    assert hint.history[-1] == ("user", "I failed my driving test.")


async def test_label_sets_read_lists_of_an_unvalidated_record_as_sets() -> None:
    """A gold and answer constructed unvalidated (an older record) hold lists: the label sets
    are those of a validated one, and one set is shared by every item naming the same labels."""
    task = make_task("behavior")
    item = next(iter(task.items(data())))
    answer = {f"{item.key}|answer": '{"behaviors": ["reflection"]}'}
    record = (await Harness.scripted(m=answer).evaluate_all(task, [item], "m"))[0]
    typed = views(task, [record])[0]
    read_back: dict[str, Any] = {"behaviors": ["a", "c"]}  # lists, as JSON gives them
    gold = BehaviorGold.model_construct(**typed.gold.model_dump() | {"behaviors": ["b", "a"]})
    old = View(record, gold, BehaviorPrediction.model_construct(**read_back))
    found = task.scoring.label_sets(old)
    assert found is not None and found == (frozenset({"a", "c"}), frozenset({"a", "b"}))
    same = task.scoring.label_sets(View(record, gold, BehaviorPrediction(behaviors=("a", "c"))))
    assert same is not None and same[0] is found[0]
