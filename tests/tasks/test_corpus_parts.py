"""Headlines read within the corpus part, against planted truth (`planted.planted_parts`).

Known traps: a rule that knows only each conversation's corpus part (its train mean rating,
mean per outcome field, majority label), and for outcome one that also knows which fields an
item asks, score what `reference/constant` scores on the headline (0 on a correlation), while
on the view with the parts pooled they still score. Known answers: a predictor that reads the
person is recovered: its headline is the correlation planted within each part.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pytest

from attunebench.analysis.references.predictors import guessed_views
from attunebench.data.schema import Conversation, State, Turn
from attunebench.stats import Weights
from attunebench.tasks import emotion, outcome, rating
from attunebench.tasks.base import Guess, Item, Task, View
from attunebench.tasks.helpers import adjusted, numeric
from attunebench.tasks.helpers.fitting import out_of_sample
from attunebench.tasks.helpers.grouping import Grouped
from planted import planted_parts
from planted.shuffled_gold import item_views

AnyItem = Item[Any]
AnyView = View[Any, Any]


def items_of(task: Task[Any, Any], conversations: Sequence[Conversation]) -> list[AnyItem]:
    return [i for i in task.items(conversations) if i.variant in ("", "blind")]


def headline(
    task: Task[Any, Any], items: Sequence[AnyItem], guesses: list[Guess], metric: str | None = None
) -> float | None:
    views, _ = guessed_views(item_views(items), guesses)
    return task.scoring.metric(metric).value(views)


def group_rule(
    grouped: Grouped[Any],
    key: Callable[[AnyItem], Hashable],
    train: Sequence[AnyItem],
    items: Sequence[AnyItem],
) -> list[Guess]:
    """Each item guessed as the train items' usual answer in its group."""
    members: dict[Hashable, list[Any]] = {}
    for item in train:
        members.setdefault(key(item), []).append(item.gold)
    usual = {k: grouped.usual(golds, False) for k, golds in members.items()}
    return [grouped.guess(usual[key(item)], item.gold) for item in items]


def part(item: AnyItem) -> Hashable:
    return item.conversation.source.name


def constant(task: Task[Any, Any], train: Sequence[AnyItem], items: Sequence[AnyItem]) -> float:
    reference = task.scoring.references()["reference/constant"]
    fitted = out_of_sample(
        reference,
        [i.gold for i in items],
        [i.conversation.id for i in items],
        [i.gold for i in train],
    )
    found = headline(task, items, fitted.guesses)
    assert found is not None
    return found


def numbers_guess(values: dict[str, float], item: AnyItem) -> Guess:
    guess = numeric.Numbers(values=values)
    gold = item.gold
    if isinstance(gold, rating.RatingGold):
        return guess, numeric.scored({"rating": gold.rating}, {"rating": gold.scale}, guess)
    return guess, numeric.scored(gold.values, gold.scales, guess)


# Rating: parts whose people rate around different means --------------------------------------


@pytest.fixture(scope="module")
def rated() -> tuple[list[AnyItem], list[AnyItem], dict[str, float]]:
    parts = (("planted-high", 3.8), ("planted-low", 2.4))
    conversations, effects = planted_parts.rated_parts(per_part=80, parts=parts, seed=3)
    task = rating.RatingTask()
    train = [c for c in conversations if int(c.id.rsplit("-", 1)[1]) % 2 == 0]
    evaluated = [c for c in conversations if c not in train]
    return items_of(task, train), items_of(task, evaluated), effects


def test_a_rule_that_knows_only_the_part_scores_the_constant_on_rating(rated: Any) -> None:
    train, items, _ = rated
    task = rating.RatingTask()
    rule = group_rule(rating_grouped(), part, train, items)
    assert headline(task, items, rule) == pytest.approx(0.0, abs=1e-9)
    assert constant(task, train, items) == pytest.approx(0.0, abs=1e-9)
    # the trap: with the parts pooled, the same rule correlates with the ratings
    pooled = headline(task, items, rule, "pooled_position_adjusted_r")
    assert pooled is not None and pooled > 0.4


def rating_grouped() -> Grouped[Any]:
    return Grouped(rating.usual_ratings, rating.rating_guess)


def test_a_reader_of_the_person_is_recovered_on_rating(rated: Any) -> None:
    _, items, effects = rated
    task = rating.RatingTask()
    rng = np.random.default_rng(5)
    guesses = [
        numbers_guess({"rating": effects[i.conversation.id] + rng.normal(0, 0.3)}, i) for i in items
    ]
    found = headline(task, items, guesses)
    # the planted answer: the correlation of guess and rating within each part, pooled
    by_part: dict[Hashable, list[tuple[float, float]]] = {}
    for item, (guess, _) in zip(items, guesses, strict=True):
        by_part.setdefault(part(item), []).append((guess.values["rating"], item.gold.rating))
    residuals = np.vstack(
        [np.array(pairs) - np.array(pairs).mean(axis=0) for pairs in by_part.values()]
    )
    planted = float(np.corrcoef(residuals.T)[0, 1])
    assert found is not None and planted > 0.5
    assert found == pytest.approx(planted, abs=0.05)


# Outcome: a second survey question some people skipped ---------------------------------------


@pytest.fixture(scope="module")
def surveyed() -> tuple[list[AnyItem], list[AnyItem], dict[str, float]]:
    conversations, quantiles = planted_parts.survey_corpus(conversations=600, seed=1)
    task = outcome.OutcomeTask()
    return items_of(task, conversations[:300]), items_of(task, conversations[300:]), quantiles


def field_set(item: AnyItem) -> Hashable:
    return part(item), tuple(sorted(item.gold.scales))


def test_the_planted_survey_gives_the_fields_asked_away(surveyed: Any) -> None:
    _, items, _ = surveyed
    answered = [
        i.gold.values["rating"] for i in items if planted_parts.SECOND_FIELD in i.gold.values
    ]
    skipped = [
        i.gold.values["rating"] for i in items if planted_parts.SECOND_FIELD not in i.gold.values
    ]
    assert np.mean(answered) == pytest.approx(2.50, abs=0.2)
    assert np.mean(skipped) == pytest.approx(2.17, abs=0.2)


def test_a_rule_that_knows_the_fields_asked_scores_the_constant_on_outcome(surveyed: Any) -> None:
    train, items, _ = surveyed
    task = outcome.OutcomeTask()
    grouped = Grouped(outcome.usual_values, outcome.values_guess)
    rule = group_rule(grouped, field_set, train, items)
    assert headline(task, items, rule) == pytest.approx(0.0, abs=1e-9)
    assert headline(task, items, group_rule(grouped, part, train, items)) == pytest.approx(
        0.0, abs=1e-9
    )
    assert constant(task, train, items) == pytest.approx(0.0, abs=1e-9)
    # the trap: read in cells of the messages shown alone, the rating's correlates
    views, _ = guessed_views(item_views(items), rule)
    rows = adjusted.adjusted_rows(
        [v.gold.shown_bin for v in views],
        [v.record.conversation_id for v in views],
        [v.prediction.values["rating"] for v in views],
        [v.gold.values["rating"] for v in views],
        [4.0] * len(views),
    )
    assert float(adjusted.adjusted_r_statistic(rows, Weights.ones(len(rows)))[0]) > 0.05


def test_a_reader_of_the_person_is_recovered_on_outcome(surveyed: Any) -> None:
    _, items, quantiles = surveyed
    task = outcome.OutcomeTask()
    rng = np.random.default_rng(2)
    guesses = [
        numbers_guess(
            {k: 1 + 4 * quantiles[i.conversation.id] + rng.normal(0, 0.5) for k in i.gold.values}, i
        )
        for i in items
    ]
    found = headline(task, items, guesses)
    assert found is not None and found > 0.6


# Emotion: parts whose people name different labels most -------------------------------------


def emotion_items(
    task: Task[Any, Any], shares: dict[str, dict[str, float]], per_part: int, seed: int
) -> list[AnyItem]:
    """One labelled turn per conversation, its label drawn with its part's shares."""
    rng = np.random.default_rng(seed)
    conversations = []
    for name, labels in shares.items():
        for c in range(per_part):
            label = str(rng.choice(list(labels), p=list(labels.values())))
            turn = Turn(index=0, user="So it goes.", state=State(primary=label, emotions=(label,)))
            cid = f"{name}-{seed}-{c}"
            conversations.append(planted_parts.conversation_in_part(cid, name, [turn]))
    return items_of(task, conversations)


# Two parts sharing labels, each with its own most common one.
SHARES = {
    "planted-sad": {"sadness": 0.6, "anxiety": 0.25, "joy": 0.15},
    "planted-glad": {"joy": 0.6, "anxiety": 0.25, "sadness": 0.15},
}


@pytest.fixture(scope="module")
def labelled() -> tuple[list[AnyItem], list[AnyItem]]:
    task = emotion.EmotionTask()
    return emotion_items(task, SHARES, 150, seed=0), emotion_items(task, SHARES, 150, seed=1)


def emotion_grouped() -> Grouped[Any]:
    return Grouped(emotion.usual_label, emotion.label_guess)


def test_naming_each_parts_majority_label_scores_the_constant_on_emotion(labelled: Any) -> None:
    train, items = labelled
    task = emotion.EmotionTask()
    rule = group_rule(emotion_grouped(), part, train, items)
    within = headline(task, items, rule)
    assert within == pytest.approx(constant(task, train, items), abs=1e-9)
    # the trap: the parts pooled, naming each part's label earns F1 on two labels, where one
    # constant for every item earns it on one
    pooled = headline(task, items, rule, "pooled_macro_f1")
    one = group_rule(emotion_grouped(), lambda item: None, train, items)
    pooled_constant = headline(task, items, one, "pooled_macro_f1")
    assert pooled is not None and pooled_constant is not None
    assert pooled > pooled_constant + 0.15


def test_a_reader_of_the_person_is_recovered_on_emotion(labelled: Any) -> None:
    _, items = labelled
    task = emotion.EmotionTask()
    rng = np.random.default_rng(4)
    guesses: list[Guess] = []
    for item in items:
        right = rng.random() < 0.8
        label = item.gold.primary if right else str(rng.choice(["sadness", "anxiety", "joy"]))
        guesses.append(emotion.label_guess(label, item.gold))
    found = headline(task, items, guesses)
    # the known answer: macro-F1 within each part, parts weighted by their items, from
    # scikit-learn
    from sklearn.metrics import f1_score

    expected, total = 0.0, 0
    for name in SHARES:
        pairs = [
            (g[0].primary, i.gold.primary)
            for i, g in zip(items, guesses, strict=True)
            if part(i) == name and g is not None
        ]
        gold = [t for _, t in pairs]
        f1 = f1_score(gold, [p for p, _ in pairs], labels=sorted(set(gold)), average="macro")
        expected, total = expected + f1 * len(pairs), total + len(pairs)
    assert found is not None and found > 0.7
    assert found == pytest.approx(expected / total, abs=0.02)


def test_emotions_chance_is_read_within_each_part_as_the_headline_is() -> None:
    """Two labels in one part, four in another, as many items each: chance is the parts'
    1/K averaged (0.375), not 1/6 over the six labels pooled."""
    shares = {
        "planted-two": {"joy": 0.5, "sadness": 0.5},
        "planted-four": {"anxiety": 0.25, "anger": 0.25, "fear": 0.25, "shame": 0.25},
    }
    task = emotion.EmotionTask()
    items = emotion_items(task, shares, 200, seed=2)
    assert task.scoring.chance([i.gold for i in items]) == pytest.approx(0.375)
    alone = [i for i in items if part(i) == "planted-four"]
    assert task.scoring.chance([i.gold for i in alone]) == pytest.approx(0.25)
