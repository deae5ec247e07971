"""The emotion task: items, hand-computed scores, abstentions that cannot help, multi-label F1,
conversation-level items read from the seeker's own words, and the reporter named by provenance.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from sklearn.metrics import f1_score
from sklearn.preprocessing import MultiLabelBinarizer
from task_harness import Harness, conversation, make_task, two_reply_turn, views

from attunebench.data.schema import Conversation, State, Turn
from attunebench.models.base import ProviderError
from attunebench.models.mock import MockProvider
from attunebench.prompts import delimit
from attunebench.records import ItemRecord
from attunebench.tasks.base import View
from attunebench.tasks.emotion import EmotionGold, EmotionPrediction, _primary_sets
from attunebench.tasks.helpers.metrics import METRICS


def data() -> list[Conversation]:
    turn_level = conversation(
        [
            two_reply_turn(
                0,
                "I can't sleep before the exam.",
                state=State(
                    primary="anxiety",
                    emotions=("anxiety", "fear"),
                    intensity=4,
                    valence=-0.5,
                    arousal=0.8,
                ),
            ),
            two_reply_turn(1, "Thanks, that helps.", state=State(emotions=("gratitude",))),
            two_reply_turn(2, "Anyway.", state=None),
            two_reply_turn(3, "Still here.", state=State(emotions=("relief", "hope"), intensity=2)),
        ],
        cid="turns",
    )
    conversation_level = conversation(
        [Turn(index=0, user="My dog died."), Turn(index=1, user="I miss him.")],
        cid="labelled",
        emotion="sadness",
    )
    return [turn_level, conversation_level]


def answer_key(record_or_item: object) -> str:
    return f"{record_or_item.key}|answer"  # type: ignore[attr-defined]


def test_items_are_turns_with_gold_and_conversation_labels_at_the_budget_turn() -> None:
    items = list(make_task("emotion").items(data()))
    assert [(i.conversation.id, i.turn_index, i.item_id, i.variant) for i in items] == [
        ("turns", 0, "turn", "blind"),
        ("turns", 1, "turn", "blind"),
        ("turns", 3, "turn", "blind"),
        # two messages only: the budget runs to the last turn
        ("labelled", 1, "conversation", "blind"),
    ]
    assert items[-1].gold.level == "conversation" and items[-1].gold.primary == "sadness"
    both = list(make_task("emotion", context="both").items(data()))
    assert len(both) == 8 and {i.variant for i in both} == {"blind", "informed"}
    with pytest.raises(ValueError, match="context must be one of"):
        make_task("emotion", context="everything")


async def test_scores_equal_hand_computed_values() -> None:
    task = make_task("emotion")
    items = list(task.items(data()))
    scripted = {
        answer_key(items[0]): '```json\n{"primary": "Anxious", "emotions": ["anxiety", "sadness"], '
        '"intensity": 3, "valence": -0.25, "arousal": 0.5}\n```',
        answer_key(items[1]): 'Sure. {"primary": "gratitude", "emotions": ["gratitude"]}',
        answer_key(items[2]): '{"primary": "hope", "emotions": ["hope"], "intensity": 2}',
        answer_key(items[3]): '{"primary": "loneliness"}',
    }
    harness = Harness.scripted(m=scripted)
    first, second, third, fourth = await harness.evaluate_all(task, items, "m")
    assert first.status == "ok" and first.score == 1.0
    # P = {anxiety, sadness}, G = {anxiety, fear}: |P∩G| / |P∪G| = 1/3
    assert first.scores["jaccard"] == pytest.approx(1 / 3)
    assert first.scores["intensity_abs_error"] == pytest.approx(1.0)
    assert first.scores["valence_abs_error"] == pytest.approx(0.25)
    assert first.scores["arousal_abs_error"] == pytest.approx(0.3)
    assert first.prediction is not None
    assert first.prediction["primary"] == "anxiety"
    assert first.prediction["emotions"] == ["anxiety", "sadness"]
    assert (first.prediction["intensity"], first.prediction["valence"]) == (3.0, -0.25)
    assert first.gold is not None and first.gold["emotions"] == ["anxiety", "fear"]
    # a single listed emotion is the primary; no number was reported, so none is scored
    assert (second.score, second.scores["jaccard"]) == (1.0, 1.0)
    assert second.gold is not None and second.gold["primary"] == "gratitude"
    assert "intensity_abs_error" not in second.scores
    # several emotions, no primary: naming any of them counts; Jaccard {hope} vs {relief, hope}
    assert (third.score, third.scores["jaccard"], third.scores["intensity_abs_error"]) == (
        1.0,
        0.5,
        0.0,
    )
    assert fourth.gold is not None and fourth.gold["level"] == "conversation"
    assert fourth.score == 0.0
    assert METRICS.get("emotion.score").value(views(task, [first, second, third, fourth])) == 0.75


async def test_an_invalid_answer_scores_the_worst_value_on_every_scale() -> None:
    task = make_task("emotion")
    item = next(iter(task.items(data())))
    harness = Harness.scripted(m=['{"primary": "melancholy"}'])
    record = await harness.evaluate(task, item, "m")
    assert record.status == "invalid" and record.score == 0.0
    assert record.raw_output == '{"primary": "melancholy"}'
    assert "melancholy" in (record.error or "")
    # the largest error of each scale the gold has: 1-5, -1..1, 0..1
    assert record.scores == {
        "primary_correct": 0.0,
        "jaccard": 0.0,
        "intensity_abs_error": 4.0,
        "valence_abs_error": 2.0,
        "arousal_abs_error": 1.0,
    }


async def test_a_failed_call_is_a_failed_record_and_never_scored() -> None:
    task = make_task("emotion")
    item = next(iter(task.items(data())))
    down = ProviderError("server down", retryable=True)
    harness = Harness({"m": MockProvider("m", failures=[down, down])})
    record = await harness.evaluate(task, item, "m")
    assert record.status == "failed" and record.score is None and record.scores == {}
    assert "server down" in (record.error or "") and not record.permanent
    assert record.prediction is None


async def test_the_prompt_lists_the_labels_with_descriptions_and_the_hint_asks_json() -> None:
    task = make_task("emotion")
    item = next(iter(task.items(data())))
    harness = Harness.scripted(m=lambda messages, hint: "{}")
    await harness.evaluate(task, item, "m")
    (call,) = harness.calls
    system = call.query.messages[0].content  # fixed for the conversation: a shared prefix
    for label in item.taxonomy.emotions:
        assert f"- {label.name}: {label.description}" in system
    assert '"primary"' in system and '"intensity"' in system
    assert "</conversation>" in call.query.messages[-1].content
    hint = call.query.hint
    assert hint is not None and hint.kind == "emotion"
    assert hint.labels == tuple(label.name for label in item.taxonomy.emotions)
    assert call.query.params.json_mode


# Abstaining ---------------------------------------------------------------------------------


def valence_data(n: int = 20) -> list[Conversation]:
    """n conversations, each one turn whose reported valence is known; every third is 'hard'."""
    return [
        conversation(
            [two_reply_turn(0, f"Message {i}.", state=State(primary="sadness", valence=-0.8))],
            cid=f"v{i:02d}",
        )
        for i in range(n)
    ]


def hard(cid: str) -> bool:
    return int(cid[1:]) % 3 == 0


def answers(abstain: bool) -> object:
    """Right on easy items (error 0.1), far off on hard ones (error 1.6), or null there."""

    def respond(messages: object, hint: object) -> str:
        key = hint.item_key  # type: ignore[attr-defined]
        valence: float | None = -0.7
        if hard(key.split("|")[1]):
            valence = None if abstain else 0.8
        return json.dumps({"primary": "sadness", "valence": valence})

    return respond


async def test_answering_null_on_hard_items_cannot_lower_the_valence_error() -> None:
    task = make_task("emotion")
    items = list(task.items(valence_data()))
    harness = Harness.scripted(honest=answers(False), abstainer=answers(True))
    honest = views(task, await harness.evaluate_all(task, items, "honest"))
    abstainer = views(task, await harness.evaluate_all(task, items, "abstainer"))
    n_hard = sum(hard(i.conversation.id) for i in items)
    mae, coverage = METRICS.get("emotion.valence_mae"), METRICS.get("emotion.valence_coverage")
    assert mae.value(honest) == pytest.approx((n_hard * 1.6 + (20 - n_hard) * 0.1) / 20)
    # a null valence is the largest error on the scale (2), never a smaller denominator
    assert mae.value(abstainer) == pytest.approx((n_hard * 2.0 + (20 - n_hard) * 0.1) / 20)
    assert mae.value(abstainer) >= mae.value(honest)
    assert all(v.status == "ok" for v in abstainer)  # a null is an answer, not an invalid one
    assert coverage.value(honest) == 1.0
    assert coverage.value(abstainer) == pytest.approx((20 - n_hard) / 20)


# Multi-label F1 -------------------------------------------------------------------------------


GOLD_SETS = [
    ("anxiety", "fear"),
    ("sadness", "loneliness"),
    ("joy",),
    ("anger", "frustration"),
    ("hope", "relief"),
]
PREDICTED = [
    ["anxiety"],
    ["sadness", "loneliness", "fear"],
    ["joy", "gratitude"],
    ["anger"],
    ["hope", "relief"],
]


def several_emotions() -> Conversation:
    turns = [
        two_reply_turn(i, f"Message {i}.", state=State(emotions=g)) for i, g in enumerate(GOLD_SETS)
    ]
    return conversation(turns)


async def test_multi_label_micro_and_macro_f1_over_every_reported_emotion() -> None:
    task = make_task("emotion")
    items = list(task.items([several_emotions()]))
    scripted = {
        answer_key(item): json.dumps({"primary": p[0], "emotions": p})
        for item, p in zip(items, PREDICTED, strict=True)
    }
    found = views(task, await Harness.scripted(m=scripted).evaluate_all(task, items, "m"))
    predicted, gold = [set(p) for p in PREDICTED], [set(g) for g in GOLD_SETS]
    binarizer = MultiLabelBinarizer().fit(predicted + gold)
    y_true, y_pred = binarizer.transform(gold), binarizer.transform(predicted)
    micro = f1_score(y_true, y_pred, average="micro", zero_division=0)
    # macro over the reported emotions (gratitude, only named, is not one of them)
    reported = [i for i, label in enumerate(binarizer.classes_) if any(label in g for g in gold)]
    assert len(reported) == len(binarizer.classes_) - 1
    macro = f1_score(y_true, y_pred, labels=reported, average="macro", zero_division=0)
    assert METRICS.get("emotion.labels_micro_f1").value(found) == pytest.approx(micro)
    assert METRICS.get("emotion.labels_macro_f1").value(found) == pytest.approx(macro)
    # the primary-label F1 reads one label a side, and differs on these items
    assert macro != pytest.approx(METRICS.get("emotion.macro_f1").value(found))
    # an invalid answer predicts no label: every gold label of it is a false negative
    broken = {**scripted, answer_key(items[0]): '{"primary": "schadenfreude"}'}
    found = views(task, await Harness.scripted(m=broken).evaluate_all(task, items, "m"))
    y_pred[0] = 0
    assert METRICS.get("emotion.labels_micro_f1").value(found) == pytest.approx(
        f1_score(y_true, y_pred, average="micro", zero_division=0)
    )


async def test_labels_named_where_only_numbers_were_reported_are_not_false_positives() -> None:
    task = make_task("emotion")
    numbers_only = two_reply_turn(len(GOLD_SETS), "Hm.", state=State(intensity=3))
    with_numbers = conversation([*several_emotions().turns, numbers_only])
    items = list(task.items([with_numbers]))
    assert items[-1].gold.labels == frozenset() and items[-1].gold.intensity == 3
    scripted = {
        answer_key(item): json.dumps({"primary": p[0], "emotions": p})
        for item, p in zip(items, [*PREDICTED, ["shame", "guilt"]], strict=True)
    }
    found = views(task, await Harness.scripted(m=scripted).evaluate_all(task, items, "m"))
    assert found[-1].score is None and "jaccard" not in found[-1].record.scores
    without = found[:-1]
    for name in ("labels_micro_f1", "labels_macro_f1"):
        metric = METRICS.get(f"emotion.{name}")
        assert metric.value(found) == pytest.approx(metric.value(without)), name


def test_a_gold_constructed_unvalidated_with_lists_has_the_labels_of_a_validated_one() -> None:
    """An older record's gold, constructed unvalidated, holds a list: its labels are read as
    a validated gold's (the primary among them), and the same labels give one shared set."""
    read_back: dict[str, Any] = {"primary": "joy", "emotions": ["pride", "joy"]}  # JSON lists
    old = EmotionGold.model_construct(**read_back)
    assert old.labels == frozenset({"joy", "pride"})
    assert EmotionGold(primary="joy", emotions=("pride", "joy")).labels is old.labels
    assert EmotionGold(emotions=("fear",)).labels == frozenset({"fear"})


# Conversation-level items read from the user's own words ------------------------------------


def seeker(n: int, words: int = 3) -> Conversation:
    turns = [Turn(index=i, user=" ".join([f"w{i}"] * words) + f" (message {i})") for i in range(n)]
    return conversation(
        turns, cid="level", emotion="sadness", situation="My sister moved abroad last month."
    )


def user_prompt(task_options: dict[str, object], conv: Conversation) -> tuple[str, str]:
    task = make_task("emotion", context="both", **task_options)
    (blind, informed) = sorted(task.items([conv]), key=lambda i: i.variant)
    prompts = [task.queries(item, "generate")[0].messages[-1].content for item in (blind, informed)]
    return prompts[0], prompts[1]


def test_the_conversation_level_item_reads_the_budget_of_the_users_words() -> None:
    # short messages: three are not 60 words, so the item reads on until 60 words are said
    blind, _ = user_prompt({}, seeker(30, words=4))
    said = [i for i in range(30) if f"(message {i})" in blind]
    assert said == list(range(10))  # 6 words a message: the tenth reaches 60
    # long messages: the first three reach 60 words, and three messages are the minimum
    blind, _ = user_prompt({}, seeker(10, words=40))
    assert [i for i in range(10) if f"(message {i})" in blind] == [0, 1, 2]
    blind, _ = user_prompt({"messages": 5, "words": 0}, seeker(10, words=40))
    assert [i for i in range(10) if f"(message {i})" in blind] == [0, 1, 2, 3, 4]


def test_the_situation_is_shown_only_in_the_informed_mode() -> None:
    blind, informed = user_prompt({}, seeker(5))
    assert "My sister moved abroad last month." in informed
    assert "My sister moved abroad last month." not in blind
    assert "<situation>" in informed and "<situation>" not in blind


def test_an_esconv_emotion_item_holds_the_first_three_seeker_messages(
    esconv: dict[tuple[str, str], list[Conversation]],
) -> None:
    task = make_task("emotion", context="both")
    conversations = esconv["hf", "test"][:40]
    items = list(task.items(conversations))
    assert {i.gold.level for i in items} == {"conversation"}
    assert len(items) == 2 * len(conversations)
    for item in items:
        prompt = task.queries(item, "generate")[0].messages[-1].content
        conversation_part = prompt.split("</conversation>")[0]
        for turn in item.conversation.turns[:3]:
            for line in turn.user.strip().splitlines():
                assert line.strip() in conversation_part, (item.key, line)
        situation = item.conversation.context.situation
        # (the seeker often repeats their situation in the chat: look for its own block)
        block = delimit("situation", situation or "")
        assert (block in prompt) == (item.variant == "informed" and bool(situation)), item.key


# The reporter, named by provenance ---------------------------------------------------------


def reported(provenance: str | None) -> Conversation:
    return conversation(
        [
            two_reply_turn(0, "It has been a long week.", state=State(primary="sadness")),
            two_reply_turn(1, "I feel a bit better.", state=State(primary="relief")),
        ],
        provenance={} if provenance is None else {"state": provenance},
    )


def test_an_undeclared_provenance_is_never_worded_as_the_users_own() -> None:
    task = make_task("emotion", context="informed")
    item = list(task.items([reported(None)]))[-1]
    prompt = task.queries(item, "generate")[0].messages[-1].content
    assert "felt sadness" in prompt and "told us" not in prompt
    assert "own words" not in prompt and "does not declare" in prompt


def test_the_informed_prompt_says_who_gave_the_labels() -> None:
    task = make_task("emotion", context="informed")
    for provenance, own_words in (("third-party", False), ("first-person", True)):
        item = list(task.items([reported(provenance)]))[-1]  # turn 1: turn 0's state shown
        prompt = task.queries(item, "generate")[0].messages[-1].content
        assert "felt sadness" in prompt
        assert ("in their own words" in prompt) is own_words, provenance
        assert ("annotators" in prompt) is (not own_words), provenance
    blind = make_task("emotion").items([reported("third-party")])
    prompt = make_task("emotion").queries(list(blind)[-1], "generate")[0].messages[-1].content
    assert "annotators" not in prompt and "own words" not in prompt


def test_primary_label_sets_are_the_answers_and_the_golds_primary() -> None:
    """Each view's (named, reported) primary label sets, read through a cache keyed by the
    two labels: a parsed answer names its primary; an invalid one, one without a primary or
    without a prediction names none; a gold without a primary gives no sets at all (the trap:
    a cached pair served for another answer or gold)."""
    record = ItemRecord(
        task="emotion", model="m", conversation_id="c", turn_index=0, item_id="i", status="ok"
    )
    sad, calm = EmotionGold(primary="sad"), EmotionGold(primary="calm")
    named = EmotionPrediction(primary="calm", emotions=("calm",))
    cases = [
        (sad, named, "ok", {"calm"}, {"sad"}),
        (calm, named, "ok", {"calm"}, {"calm"}),
        (sad, named, "invalid", set(), {"sad"}),
        (sad, EmotionPrediction(), "ok", set(), {"sad"}),
        (calm, None, "failed", set(), {"calm"}),
        (EmotionGold(emotions=("sad",)), named, "ok", set(), set()),
    ]
    for _ in range(2):  # the second time from the cache
        for gold, prediction, status, guessed, held in cases:
            found = _primary_sets(View(record, gold, prediction, status))
            assert found == (frozenset(guessed), frozenset(held))
