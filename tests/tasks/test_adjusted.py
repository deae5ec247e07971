"""Planted truths for the headlines no trivial strategy can win (`tasks.helpers.adjusted`) and the
pair cues (`tasks.helpers.pair_cues`): each recovers a known answer, and a constant or position-only
guess, which a plain correlation or error would reward, scores chance.
"""

from __future__ import annotations

import numpy as np
import pytest

from attunebench.records import ItemRecord
from attunebench.stats import Weights
from attunebench.tasks.base import View
from attunebench.tasks.helpers import adjusted, pair_cues
from attunebench.tasks.helpers.fitting import out_of_sample
from attunebench.tasks.helpers.metrics import Statistic
from attunebench.tasks.helpers.numeric import Numbers as NumbersGuess
from attunebench.tasks.helpers.pairs import PairGold
from attunebench.tasks.rating import RatingGold, RatingTask
from planted import shuffled_gold

CELLS = 6


def planted(
    rho: float, n: int = 20000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cells whose means differ (gold and prediction drift together with position), and a
    within-cell correlation `rho` between prediction and gold."""
    rng = np.random.default_rng(seed)
    cell = rng.integers(0, CELLS, n)
    drift = np.linspace(-2, 2, CELLS)
    z, e = rng.standard_normal(n), rng.standard_normal(n)
    gold = 3 + drift[cell] + z
    guess = 3 + 2 * drift[cell] + rho * z + np.sqrt(1 - rho**2) * e
    conversation = np.arange(n) // 5
    return cell, conversation, guess, gold


def statistic(
    fn: Statistic, cell: np.ndarray, conversation: np.ndarray, guess: np.ndarray, gold: np.ndarray
) -> float:
    rows = adjusted.adjusted_rows(
        cell.tolist(), [str(k) for k in conversation], list(guess), list(gold), [4.0] * len(gold)
    )
    return float(fn(rows, Weights.ones(len(gold)))[0])


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.7])
def test_the_adjusted_correlation_recovers_a_planted_one(rho: float) -> None:
    cell, conversation, guess, gold = planted(rho)
    found = statistic(adjusted.adjusted_r_statistic, cell, conversation, guess, gold)
    assert found == pytest.approx(rho, abs=0.02)


def test_a_position_only_or_constant_guess_scores_zero_where_a_plain_correlation_rewards_it() -> (
    None
):
    cell, conversation, _, gold = planted(0.5)
    by_position = np.array([gold[cell == k].mean() for k in range(CELLS)])[cell]
    assert np.corrcoef(by_position, gold)[0, 1] > 0.6  # the trap: position alone looks good
    for guess in (by_position, np.full(len(gold), 3.0), 7.0 - 2 * by_position):
        for fn in (
            adjusted.adjusted_r_statistic,
            adjusted.between_r_statistic,
            adjusted.within_r_statistic,
        ):
            assert statistic(fn, cell, conversation, guess, gold) == pytest.approx(0, abs=1e-9)
    # skill against the position reference: 0 for it, below 0 for a constant, 1 when exact
    skill = adjusted.position_skill_statistic
    assert statistic(skill, cell, conversation, by_position, gold) == pytest.approx(0, abs=1e-9)
    assert statistic(skill, cell, conversation, np.full(len(gold), 3.0), gold) < -0.5
    assert statistic(skill, cell, conversation, gold, gold) == pytest.approx(1.0)


def test_between_and_within_person_parts_recover_where_the_signal_lies() -> None:
    rng = np.random.default_rng(3)
    people, per = 400, 20
    conversation = np.repeat(np.arange(people), per)
    cell = rng.integers(0, CELLS, people * per)
    person, moment = rng.standard_normal(people)[conversation], rng.standard_normal(people * per)
    gold = np.linspace(1, 2, CELLS)[cell] + person + moment
    knows_person = person + 0.01 * rng.standard_normal(people * per)
    knows_moment = moment
    args = (cell, conversation)
    assert statistic(adjusted.between_r_statistic, *args, knows_person, gold) > 0.95
    assert statistic(adjusted.within_r_statistic, *args, knows_person, gold) == pytest.approx(
        0, abs=0.05
    )
    assert statistic(adjusted.within_r_statistic, *args, knows_moment, gold) > 0.95
    assert statistic(adjusted.between_r_statistic, *args, knows_moment, gold) < 0.3


def test_an_unanswered_item_counts_as_no_information_never_left_out() -> None:
    cell, conversation, _, gold = planted(0.0)
    half = [g if i % 2 else None for i, g in enumerate(gold.tolist())]
    rows = adjusted.adjusted_rows(
        cell.tolist(), [str(k) for k in conversation], half, list(gold), [4.0] * len(gold)
    )
    found = float(adjusted.adjusted_r_statistic(rows, Weights.ones(len(gold)))[0])
    # exact on half the items, nothing on the other half: sqrt(1/2), not 1
    assert found == pytest.approx(np.sqrt(0.5), abs=0.02)


def test_the_mean_rho_over_fields_scores_a_constant_zero() -> None:
    rng = np.random.default_rng(1)
    gold = rng.integers(1, 6, (500, 2)).astype(float)
    exact = np.stack([gold[:, 0], gold[:, 0], np.full(500, 3.0), gold[:, 1]], axis=1)
    found = float(adjusted.mean_rho_statistic(exact, Weights.ones(500))[0])
    assert found == pytest.approx(0.5)  # field one exact (1), field two constant (0)


def test_the_rating_references_score_chance_on_the_headline() -> None:
    """Fitted on a train split, a constant and a position-only guess are constant within each
    position cell (0 exactly); cross-fitted, read within each fold, they are too."""
    task = RatingTask()
    rng = np.random.default_rng(5)
    items = []
    for k in range(300):
        visible = int(rng.integers(2, 40))
        gold = RatingGold(
            rating=float(np.clip(round(2 + visible / 10 + rng.normal()), 1, 5)),
            position=float(rng.random()),
            visible=visible,
            reply_chars=int(rng.integers(10, 500)),
        )
        items.append((f"c{k // 6}", gold))
    headline = task.scoring.metric()
    evaluated, train = items[:150], [gold for _, gold in items[150:]]
    views = [
        View(
            ItemRecord(
                task="rating",
                model="reference",
                conversation_id=cid,
                turn_index=0,
                item_id="feedback",
                status="ok",
            ),
            gold,
            None,
        )
        for cid, gold in evaluated
    ]
    golds, ids = [gold for _, gold in evaluated], [cid for cid, _ in evaluated]
    for name in ("reference/constant", "reference/position-only"):
        reference = task.scoring.references()[name]
        for fitted in (
            out_of_sample(reference, golds, ids, train),
            out_of_sample(reference, golds, ids),
        ):
            assert all(guess is not None for guess in fitted.guesses)
            assert shuffled_gold.headline(headline, views, golds, fitted) == pytest.approx(
                0.0, abs=1e-9
            ), (name, fitted.fit)


def golds(n: int, leak: float, seed: int) -> list[tuple[str, PairGold]]:
    """Pairs across turns whose earlier reply wins with probability 0.5 + leak * sign(early
    turn in the first half): a leak of the visible position planted in the gold."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        early = int(rng.integers(0, 20))
        late = early + int(rng.integers(1, 10))
        wins = rng.random() < 0.5 + (leak if early < 10 else -leak)
        out.append(
            (
                f"c{k // 4}",
                PairGold(
                    first=f"{early}:a",
                    second=f"{late}:a",
                    chosen=f"{early}:a" if wins else f"{late}:a",
                    first_turn=early,
                    second_turn=late,
                    len_first=10,
                    len_second=10,
                    derived=True,
                ),
            )
        )
    return out


def accuracy(
    cue: pair_cues.Cue, train: list[tuple[str, PairGold]], items: list[tuple[str, PairGold]]
) -> float:
    """The cue's accuracy on `items`, fitted on `train`."""
    golds = [g for _, g in items]
    fitted = None if cue.fit is None else cue.fit([g for _, g in train])
    picks = cue.pick(fitted, golds)
    hits = [float(p == g.key) for p, g in zip(picks, golds, strict=True) if p is not None]
    return sum(hits) / len(hits)


def test_the_position_classifier_finds_a_planted_leak_and_only_then() -> None:
    leaking, fair = golds(3000, 0.3, seed=0), golds(3000, 0.0, seed=1)
    assert accuracy(pair_cues.position_classifier, golds(3000, 0.3, seed=2), leaking) > 0.75
    assert accuracy(pair_cues.position_classifier, golds(3000, 0.0, seed=3), fair) == pytest.approx(
        0.5, abs=0.03
    )
    # the later-reply rule cannot see this leak: it is balanced over early turns
    assert accuracy(pair_cues.later, [], leaking) == pytest.approx(0.5, abs=0.03)


def test_a_guess_that_knows_only_the_rating_scale_scores_zero() -> None:
    # thumbs (0-1) beside 1-5 ratings: the scale's midpoint alone would correlate with the
    # gold across scales; the cells keep the scales apart
    task = RatingTask()
    rng = np.random.default_rng(2)
    golds = []
    for k in range(200):
        scale = (0.0, 1.0) if k % 2 else (1.0, 5.0)
        rating = float(rng.integers(int(scale[0]), int(scale[1]) + 1))
        golds.append(RatingGold(rating=rating, scale=scale, position=0.5, visible=5))
    headline = task.scoring.metric()
    views = []
    for k, gold in enumerate(golds):
        record = ItemRecord(
            task="rating",
            model="m",
            conversation_id=f"c{k // 4}",
            turn_index=0,
            item_id="feedback",
            status="ok",
        )
        middle = NumbersGuess(values={"rating": sum(gold.scale) / 2})
        views.append(View(record, gold, middle))
    assert headline.value(views) == pytest.approx(0.0, abs=1e-9)
