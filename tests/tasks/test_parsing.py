"""Strict answer parsing: fences, prose, case, synonyms; everything else is invalid."""

from __future__ import annotations

import pytest
from task_harness import conversation, make_task, two_reply_turn

from attunebench.data.schema import State
from attunebench.data.taxonomy import load_taxonomy
from attunebench.tasks.base import InvalidAnswer, Output
from attunebench.tasks.helpers.judging import parse_pairwise, parse_rubric
from attunebench.tasks.helpers.parsing import (
    answer_fields,
    bounded_number,
    expected_value,
    extract_json,
    label_list,
    most_probable,
    one_label,
    parse_choice,
)

TAXONOMY = load_taxonomy("attunebench-default")
EMOTIONS = TAXONOMY.emotions
BEHAVIORS = TAXONOMY.behaviors


def test_bare_fenced_and_embedded_json_are_all_read() -> None:
    bare = '{"choice": "A"}'
    fenced = 'Here you go:\n```json\n{"choice": "B"}\n```\nThanks.'
    plain_fence = '```\n{"choice": "tie"}\n```'
    prose = 'I think the user liked the first. {"choice": "A"} That is my answer.'
    assert [parse_choice(t) for t in (bare, fenced, plain_fence, prose)] == ["A", "B", "tie", "A"]


def test_the_first_object_that_parses_wins_and_braces_in_prose_are_skipped() -> None:
    text = 'Note {not json} then {"choice": "b"} and later {"choice": "A"}'
    assert parse_choice(text) == "B"
    assert extract_json('[1, 2] {"x": {"y": 1}}') == {"x": {"y": 1}}
    assert answer_fields('{"Primary": "joy", "EMOTIONS": []}') == {"primary": "joy", "emotions": []}


@pytest.mark.parametrize("text", ["", "A", "The answer is A.", '["A"]', "{'choice': 'A'}"])
def test_no_json_object_is_invalid(text: str) -> None:
    with pytest.raises(InvalidAnswer):
        parse_choice(text)


def test_too_many_braces_are_refused_quickly() -> None:
    with pytest.raises(InvalidAnswer, match="first 100"):
        extract_json("{" * 10_000)


def test_labels_forgive_case_and_listed_synonyms_and_refuse_the_rest() -> None:
    assert one_label("ANXIOUS", EMOTIONS, "primary") == "anxiety"
    assert label_list(["Overwhelmed", "anxiety", "anxious"], EMOTIONS, "e") == (
        "overwhelm",
        "anxiety",
    )
    assert label_list("joy", EMOTIONS, "e") == ("joy",)  # one label as a string
    for bad in ("melancholy", 3, None):
        with pytest.raises(InvalidAnswer):
            one_label(bad, EMOTIONS, "primary")
    with pytest.raises(InvalidAnswer):
        label_list("joy, fear", EMOTIONS, "e")  # no single label
    with pytest.raises(InvalidAnswer):
        label_list({"joy": 1}, EMOTIONS, "e")


def test_numbers_must_be_in_range_or_null() -> None:
    assert bounded_number(None, 1, 5, "x") is None
    assert bounded_number(4, 1, 5, "x") == 4.0
    for bad in (7, "low", True, float("nan")):
        with pytest.raises(InvalidAnswer):
            bounded_number(bad, 1, 5, "x")


def emotion_item() -> object:
    conv = conversation([two_reply_turn(0, "Hm.", state=State(primary="joy", intensity=3))])
    return next(iter(make_task("emotion").items([conv])))


def emotion(text: str) -> object:
    return make_task("emotion").parse(emotion_item(), {"answer": Output(text=text)})  # type: ignore[arg-type]


def test_an_emotion_answer_is_read_whole() -> None:
    answer = emotion(
        '{"Primary": "ANXIOUS", "emotions": ["Overwhelmed", "anxiety"], "intensity": 4, '
        '"valence": -0.5, "arousal": 0.75}'
    )
    assert answer.primary == "anxiety"  # type: ignore[attr-defined]
    assert answer.emotions == ("anxiety", "overwhelm")  # type: ignore[attr-defined]
    assert (answer.intensity, answer.valence, answer.arousal) == (4.0, -0.5, 0.75)  # type: ignore[attr-defined]
    sparse = emotion('{"primary": "joy", "intensity": null}')
    assert sparse.emotions == ("joy",) and sparse.intensity is None  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "text",
    [
        '{"primary": "melancholy"}',  # not in the taxonomy
        '{"primary": "joy", "emotions": ["joy", "schadenfreude"]}',  # one wrong label
        '{"emotions": ["joy"]}',  # no primary
        '{"primary": null}',
        '{"primary": 3}',
        '{"primary": "joy", "intensity": 7}',  # out of range
        '{"primary": "joy", "valence": "low"}',
        '{"primary": "joy", "arousal": true}',
        '{"primary": "joy", "emotions": "joy, fear"}',
    ],
)
def test_wrong_emotion_answers_are_invalid(text: str) -> None:
    with pytest.raises(InvalidAnswer):
        emotion(text)


def test_behaviors_normalise_and_refuse_unknown_labels() -> None:
    turn = two_reply_turn(0, "Hi.", behaviors=(("question",), ()))
    task = make_task("behavior")
    item = next(iter(task.items([conversation([turn])])))

    def parse(text: str) -> tuple[str, ...]:
        return task.parse(item, {"answer": Output(text=text)}).behaviors

    text = '```json\n{"behaviors": ["Reflection of feelings", "QUESTION", "question"]}\n```'
    assert parse(text) == ("reflection", "question")
    assert parse('{"behaviors": []}') == ()
    with pytest.raises(InvalidAnswer, match="not one of the allowed labels"):
        parse('{"behaviors": ["empathy"]}')
    with pytest.raises(InvalidAnswer):
        parse('{"labels": ["question"]}')


def test_choices_and_verdicts() -> None:
    assert parse_choice('{"choice": " a "}') == "A"
    assert parse_choice('{"choice": "TIE"}') == "tie"
    with pytest.raises(InvalidAnswer):
        parse_choice('{"choice": "both"}')
    assert parse_pairwise('{"winner": "B", "reason": "warmer"}') == {
        "winner": "B",
        "reason": "warmer",
    }
    assert parse_rubric('{"score": 7, "reason": "good"}')["score"] == 7.0
    for bad in ('{"score": 0}', '{"score": 11}', '{"reason": "no score"}', '{"score": "7"}'):
        with pytest.raises(InvalidAnswer):
            parse_rubric(bad)


def test_probabilities_are_read_never_refused() -> None:
    labels = {"A": "joy", "B": "fear", "C": "hope"}
    assert most_probable({"A": 0.2, "B": 0.5, "C": 0.3}, labels) == "fear"
    assert most_probable({"A": 0.4, "B": 0.4, "C": 0.2}, labels) == "joy"  # a tie: first listed
    # renormalised over the keys given
    assert expected_value({"1": 1.0, "3": 1.0}, {"1": 1.0, "3": 3.0}) == 2.0


def test_an_empty_reply_is_invalid() -> None:
    turn = two_reply_turn(0, "Hi.", texts=("Chosen.", "Other."))
    task = make_task("response")
    item = next(iter(task.items([conversation([turn])])))
    assert task.parse(item, {"reply": Output(text="  I hear you.  \n")}).reply == "I hear you."
    with pytest.raises(InvalidAnswer):
        task.parse(item, {"reply": Output(text=" \n\t")})
