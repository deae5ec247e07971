"""Strict answer parsing: fences, prose, case, synonyms; everything else is invalid."""

from __future__ import annotations

import pytest

from attunebench.data.taxonomy import load_taxonomy
from attunebench.tasks.parsing import (
    InvalidAnswer,
    extract_json,
    parse_behaviors,
    parse_choice,
    parse_emotion,
    parse_pairwise,
    parse_reply,
    parse_rubric,
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


@pytest.mark.parametrize("text", ["", "A", "The answer is A.", "[\"A\"]", "{'choice': 'A'}"])
def test_no_json_object_is_invalid(text: str) -> None:
    with pytest.raises(InvalidAnswer):
        parse_choice(text)


def test_emotion_labels_forgive_case_and_listed_synonyms() -> None:
    answer = parse_emotion(
        '{"Primary": "ANXIOUS", "emotions": ["Overwhelmed", "anxiety"], "intensity": 4, '
        '"valence": -0.5, "arousal": 0.75}',
        EMOTIONS,
    )
    assert answer.primary == "anxiety"
    assert answer.emotions == ("anxiety", "overwhelm")  # primary first, de-duplicated
    assert (answer.intensity, answer.valence, answer.arousal) == (4.0, -0.5, 0.75)


def test_emotion_numbers_may_be_null_or_absent() -> None:
    answer = parse_emotion('{"primary": "joy", "intensity": null}', EMOTIONS)
    assert answer.emotions == ("joy",)
    assert (answer.intensity, answer.valence, answer.arousal) == (None, None, None)


@pytest.mark.parametrize(
    "text",
    [
        '{"primary": "melancholy"}',  # not in the taxonomy
        '{"primary": "joy", "emotions": ["joy", "schadenfreude"]}',  # one wrong label
        '{"emotions": ["joy"]}',  # no primary
        '{"primary": 3}',
        '{"primary": "joy", "intensity": 7}',  # out of range
        '{"primary": "joy", "valence": "low"}',
        '{"primary": "joy", "arousal": true}',
        '{"primary": "joy", "emotions": "joy, fear"}',  # a string that is no single label
    ],
)
def test_wrong_emotion_answers_are_invalid(text: str) -> None:
    with pytest.raises(InvalidAnswer):
        parse_emotion(text, EMOTIONS)


def test_behaviors_normalise_and_refuse_unknown_labels() -> None:
    text = '```json\n{"behaviors": ["Reflection of feelings", "QUESTION", "question"]}\n```'
    assert parse_behaviors(text, BEHAVIORS) == ("reflection", "question")
    assert parse_behaviors('{"behaviors": []}', BEHAVIORS) == ()
    with pytest.raises(InvalidAnswer, match="not one of the allowed labels"):
        parse_behaviors('{"behaviors": ["empathy"]}', BEHAVIORS)
    with pytest.raises(InvalidAnswer):
        parse_behaviors('{"labels": ["question"]}', BEHAVIORS)


def test_choices_and_verdicts() -> None:
    assert parse_choice('{"choice": " a "}') == "A"
    assert parse_choice('{"choice": "TIE"}') == "tie"
    with pytest.raises(InvalidAnswer):
        parse_choice('{"choice": "both"}')
    verdict = parse_pairwise('{"winner": "B", "reason": "warmer"}')
    assert (verdict.winner, verdict.reason) == ("B", "warmer")
    assert parse_rubric('{"score": 7, "reason": "good"}').score == 7.0
    for bad in ('{"score": 0}', '{"score": 11}', '{"reason": "no score"}', '{"score": "7"}'):
        with pytest.raises(InvalidAnswer):
            parse_rubric(bad)


def test_replies_are_plain_text_and_must_not_be_empty() -> None:
    assert parse_reply("  I hear you.  \n") == "I hear you."
    with pytest.raises(InvalidAnswer):
        parse_reply(" \n\t")
