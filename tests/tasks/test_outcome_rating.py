"""The outcome and rating tasks: items, parse, score, worst value and metrics on hand-built
conversations, and their gold on the imported ESConv splits."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
from scipy.stats import spearmanr
from task_harness import Harness, conversation, make_task, rated_turn, views

from attunebench.data.schema import Conversation, Outcome, RatingScale, State, Turn
from attunebench.registry import RegistryError
from attunebench.tasks.base import InvalidAnswer, Output
from attunebench.tasks.helpers.metrics import METRICS

# Outcome ----------------------------------------------------------------------------------


def told(cid: str, start: float | None, final: float | None, **survey: float | str) -> Conversation:
    turns = [
        Turn(
            index=0,
            user="I have been so worried about my job.",
            state=State(intensity=start) if start else None,
        ),
        rated_turn(1, None, user="Thank you, that helps a bit."),
    ]
    outcome = Outcome(
        final_state=State(intensity=final) if final else None,
        rating=survey.pop("rating", None),  # type: ignore[arg-type]
        survey=survey,
    )
    return conversation(turns, cid=cid, outcome=outcome, rating_scale=RatingScale(low=1, high=5))


def test_outcome_items_and_gold() -> None:
    conversations = [
        told("full", 4, 2, empathy=5, relevance=4, comment="nice", rating=4),
        told("no-start", None, 3),
        told("nothing", 3, None),  # no outcome at all: no item
    ]
    items = list(make_task("outcome", context="both").items(conversations))
    assert [(i.conversation.id, i.turn_index, i.variant) for i in items] == [
        ("full", 1, "blind"),
        ("full", 1, "informed"),
        ("no-start", 1, "blind"),
        ("no-start", 1, "informed"),
    ]
    full = items[0].gold
    assert full.level == "conversation"
    # the change of intensity is not gold: it would be computed from the gold's own start
    assert full.values == {"final_intensity": 2.0, "rating": 4.0, "empathy": 5.0, "relevance": 4.0}
    assert full.visible == 3  # the messages the prompt shows, its position cell's input
    assert items[2].gold.values == {"final_intensity": 3.0}


def test_outcome_queries_ask_every_field_but_the_change() -> None:
    task = make_task("outcome")
    (item,) = task.items([told("full", 4, 2, empathy=5, relevance=4, rating=4)])
    (query,) = task.queries(item, "generate")
    prompt = query.messages[-1].content
    for field in ("final_intensity", "rating", "empathy", "relevance"):
        assert field in prompt
    assert "intensity_change" not in prompt
    assert "Thank you, that helps a bit." in prompt  # the whole conversation
    assert query.hint is not None and set(query.hint.labels) == {
        "final_intensity",
        "rating",
        "empathy",
        "relevance",
    }
    choice = task.queries(item, "choice")
    assert sorted(q.key for q in choice) == ["empathy", "final_intensity", "rating", "relevance"]
    for q in choice:
        assert q.choice is not None and q.choice.keys == ("1", "2", "3", "4", "5")


def test_outcome_parse_score_and_worst() -> None:
    task = make_task("outcome")
    (item,) = task.items([told("full", 4, 2, empathy=5, relevance=4)])
    answer = '{"final_intensity": 3, "empathy": null, "relevance": 2}'
    prediction = task.parse(item, {"answer": Output(text=answer)})
    assert prediction.values == {"final_intensity": 3.0, "empathy": None, "relevance": 2.0}
    scored = task.score(item, prediction)
    # final 3 vs 2: 1 of 4; empathy missing: 4 of 4; relevance 2 of 4
    assert scored.values == {
        "final_intensity_abs_error": 1.0,
        "empathy_abs_error": 4.0,
        "relevance_abs_error": 2.0,
    }
    assert scored.score == pytest.approx(1 - (1 / 4 + 1 + 2 / 4) / 3)
    worst = task.worst(item, None)
    assert worst.score == 0.0
    assert worst.values["empathy_abs_error"] == 4.0
    with pytest.raises(InvalidAnswer):
        task.parse(item, {"answer": Output(text='{"mood": 3}')})
    with pytest.raises(InvalidAnswer):
        task.parse(item, {"answer": Output(text='{"final_intensity": 9}')})


def test_outcome_choice_keeps_the_expected_value_and_the_most_probable() -> None:
    task = make_task("outcome")
    (item,) = task.items([told("full", 4, 2, empathy=5)])
    spreads = {
        "final_intensity": {"1": 0.1, "2": 0.6, "3": 0.1, "4": 0.1, "5": 0.1},
        "empathy": {"1": 0.0, "2": 0.0, "3": 0.5, "4": 0.0, "5": 0.5},
    }
    outputs = {k: Output(probabilities=v) for k, v in spreads.items()}
    prediction = task.parse(item, outputs)
    assert prediction.values["final_intensity"] == pytest.approx(0.1 + 1.2 + 0.3 + 0.4 + 0.5)
    assert prediction.values["empathy"] == pytest.approx(4.0)
    assert prediction.argmax["final_intensity"] == 2.0
    assert prediction.argmax["empathy"] == 3.0  # a tie goes to the key listed first
    assert prediction.probabilities == spreads


OUTCOME_GOLD = [  # (start, final, empathy)
    (5, 1, 5),
    (4, 2, 4),
    (3, 3, 5),
    (5, 4, 2),
    (2, 2, 3),
    (4, 5, 1),
    (3, 1, 4),
    (4, 3, 3),
]
OUTCOME_ANSWERS = [  # (final, empathy); None: left out
    (2, 5),
    (2, None),
    (4, 4),
    (3, 2),
    (None, 3),
    (5, 2),
    (1, 5),
    (3, 3),
]


async def test_outcome_metrics_equal_scipy_and_a_plain_loop() -> None:
    conversations = [told(f"o{i}", s, f, empathy=e) for i, (s, f, e) in enumerate(OUTCOME_GOLD)]
    task = make_task("outcome")
    items = list(task.items(conversations))
    scripted = {
        f"{item.key}|answer": json.dumps({"final_intensity": f, "empathy": e})
        for item, (f, e) in zip(items, OUTCOME_ANSWERS, strict=True)
    }
    found = views(task, await Harness.scripted(m=scripted).evaluate_all(task, items, "m"))
    assert all(v.status == "ok" for v in found)
    gold_final = [g[1] for g in OUTCOME_GOLD]
    answered = [(a[0], g) for a, g in zip(OUTCOME_ANSWERS, gold_final, strict=True) if a[0]]
    rho = spearmanr(*zip(*answered, strict=True)).statistic
    assert METRICS.get("outcome.final_intensity_spearman").value(found) == pytest.approx(rho)
    errors = [
        4.0 if a[0] is None else abs(a[0] - g)
        for a, g in zip(OUTCOME_ANSWERS, gold_final, strict=True)
    ]
    assert METRICS.get("outcome.final_intensity_mae").value(found) == pytest.approx(np.mean(errors))
    assert METRICS.get("outcome.final_intensity_coverage").value(found) == pytest.approx(7 / 8)
    with pytest.raises(RegistryError):  # the change of intensity left the task
        METRICS.get("outcome.intensity_change_spearman")
    empathy = [(a[1], g[2]) for a, g in zip(OUTCOME_ANSWERS, OUTCOME_GOLD, strict=True)]
    mae = np.mean([4.0 if a is None else abs(a - g) for a, g in empathy])
    assert METRICS.get("outcome.empathy_mae").value(found) == pytest.approx(mae)
    assert METRICS.get("outcome.empathy_coverage").value(found) == pytest.approx(7 / 8)
    assert METRICS.get("outcome.rating_mae").value(found) is None  # no rating anywhere
    scores = [v.score for v in found]
    assert METRICS.get("outcome.score").value(found) == pytest.approx(np.mean(scores))


# Rating -----------------------------------------------------------------------------------


def feedback_conversation(cid: str, feedback: list[float | None]) -> Conversation:
    turns = []
    for i, rating in enumerate(feedback):
        turn = rated_turn(i, None, user=f"{cid} says message {i}.")
        turns.append(turn.model_copy(update={"feedback": rating}))
    return conversation(turns, cid=cid, rating_scale=RatingScale(low=1, high=5))


def test_rating_items_are_the_turns_with_feedback() -> None:
    conv = feedback_conversation("r", [None, 4, None, 2, 5])
    items = list(make_task("rating").items([conv]))
    assert [(i.turn_index, i.item_id, i.gold.rating) for i in items] == [
        (1, "feedback", 4.0),
        (3, "feedback", 2.0),
        (4, "feedback", 5.0),
    ]
    assert [i.gold.position for i in items] == [0.25, 0.75, 1.0]
    assert [i.gold.third for i in items] == [0, 2, 2]


def test_the_rating_prompt_stops_before_the_message_that_gave_it() -> None:
    task = make_task("rating")
    conv = feedback_conversation("r", [None, 4, None, 2])
    item = list(task.items([conv]))[1]  # turn 3
    prompt = task.queries(item, "generate")[0].messages[-1].content
    assert "r says message 2." in prompt and "The reply to message 2." in prompt
    assert "r says message 3." not in prompt  # the message the rating came with
    assert "from 1 (very poor) to 5 (very good)" in prompt
    (choice,) = task.queries(item, "choice")
    assert choice.choice is not None and choice.choice.keys == ("1", "2", "3", "4", "5")


def test_rating_parse_score_worst_and_choice() -> None:
    task = make_task("rating")
    item = next(iter(task.items([feedback_conversation("r", [None, 4])])))
    prediction = task.parse(item, {"answer": Output(text='{"rating": 2.5}')})
    scored = task.score(item, prediction)
    assert scored.values == {"rating_abs_error": 1.5}
    assert scored.score == pytest.approx(1 - 1.5 / 4)
    assert task.worst(item, None).score == 0.0
    assert (
        task.score(item, task.parse(item, {"answer": Output(text='{"rating": null}')})).score == 0.0
    )
    with pytest.raises(InvalidAnswer):
        task.parse(item, {"answer": Output(text='{"stars": 3}')})
    spread = {"1": 0.05, "2": 0.05, "3": 0.1, "4": 0.2, "5": 0.6}
    chosen = task.parse(item, {"rating": Output(probabilities=spread)})
    assert chosen.values["rating"] == pytest.approx(0.05 + 0.1 + 0.3 + 0.8 + 3.0)
    assert chosen.argmax["rating"] == 5.0


RATINGS = {  # per conversation: (gold, predicted); None: left out
    "long": [(1, 2), (2, 1), (3, 4), (4, 5), (5, 5)],
    "three": [(4, 2), (2, 3), (3, None)],  # two answered: left out of the within-rho
    "flat": [(2, 3), (4, 3), (5, 3)],  # a constant prediction: no rho
    "short": [(5, 1), (1, 5)],
    "four": [(3, 1), (5, 3), (4, 2), (2, 4)],
}


async def test_rating_metrics_equal_scipy_and_a_plain_loop() -> None:
    conversations = [
        feedback_conversation(cid, [g for g, _ in rows]) for cid, rows in RATINGS.items()
    ]
    task = make_task("rating")
    items = list(task.items(conversations))
    predicted = {
        f"{item.key}|answer": json.dumps({"rating": p})
        for item, (_, p) in zip(items, [r for rows in RATINGS.values() for r in rows], strict=True)
    }
    found = views(task, await Harness.scripted(m=predicted).evaluate_all(task, items, "m"))
    rhos = []
    for rows in RATINGS.values():
        answered = [(p, g) for g, p in rows if p is not None]
        if len(answered) >= 3 and len({p for p, _ in answered}) > 1:
            rhos.append(spearmanr(*zip(*answered, strict=True)).statistic)
    assert len(rhos) == 2
    within = METRICS.get("rating.within_conversation_spearman").value(found)
    assert within == pytest.approx(np.mean(rhos))
    every = [(g, p) for rows in RATINGS.values() for g, p in rows]
    pooled = [(p, g) for g, p in every if p is not None]
    assert METRICS.get("rating.rating_spearman").value(found) == pytest.approx(
        spearmanr(*zip(*pooled, strict=True)).statistic
    )
    mae = np.mean([4.0 if p is None else abs(p - g) for g, p in every])
    assert METRICS.get("rating.rating_mae").value(found) == pytest.approx(mae)
    assert METRICS.get("rating.rating_coverage").value(found) == pytest.approx(
        len(pooled) / len(every)
    )


def test_the_rating_references_guess_from_the_cell_the_prompt_shows() -> None:
    conversations = [
        feedback_conversation(cid, [g for g, _ in rows]) for cid, rows in RATINGS.items()
    ]
    items = list(make_task("rating").items(conversations))
    references = make_task("rating").scoring.references()
    golds = [i.gold for i in items]
    train = golds[::2]  # fitted on these, guessing every item
    by_bin: dict[int, list[float]] = defaultdict(list)
    for gold in train:
        by_bin[gold.shown_bin].append(gold.rating)
    median = float(np.median([g.rating for g in train]))
    position = references["reference/position-only"]
    assert position.fit is not None
    for guess, gold in zip(position.guess(position.fit(train), golds), golds, strict=True):
        assert guess is not None
        prediction, scored = guess
        # the usual rating of the train items showing as many messages, else their median
        usual = np.mean(by_bin[gold.shown_bin]) if gold.shown_bin in by_bin else median
        assert prediction.values["rating"] == pytest.approx(usual)
        assert scored.score == pytest.approx(1 - abs(usual - gold.rating) / 4)
    constant = references["reference/constant"]
    assert constant.fit is not None
    guessed = constant.guess(constant.fit(train), golds)
    assert {guess[0].values["rating"] for guess in guessed if guess} == {median}


# The shared data ----------------------------------------------------------------------------


def test_every_esconv_split_has_outcome_items_and_the_rated_ones_rating_items(
    esconv: dict[tuple[str, str], list[Conversation]],
) -> None:
    outcome, rating = make_task("outcome"), make_task("rating")
    for (variant, split), conversations in esconv.items():
        outcomes = list(outcome.items(conversations))
        assert len(outcomes) > len(conversations) / 2, (variant, split)
        ratings = list(rating.items(conversations))
        if variant in ("failed", "multiesc"):
            assert len(ratings) > 2 * len(conversations), (variant, split)
            assert {i.gold.scale for i in ratings} == {(1.0, 5.0)}
        else:
            assert ratings == [], (variant, split)  # the HF splits hold no seeker feedback
        fields = {k for i in outcomes for k in i.gold.values}
        assert {"final_intensity", "empathy", "relevance"} <= fields
        assert "intensity_change" not in fields
