"""Pairs derived from ratings: same-message pairs first, across-turn pairs balanced so that
position alone scores chance, drawn without favouring wide rating gaps, the gap kept in the gold.
"""

from __future__ import annotations

from collections import Counter

import pytest
from task_harness import conversation, make_task, rated_turn

from attunebench.data.schema import Conversation, Response, Turn
from attunebench.tasks import pairs as p
from attunebench.tasks.preference import pair_references

LATER = pair_references()["reference/later-reply"]
LONGER = pair_references()["reference/longer-reply"]


def same_message_turn(index: int, ratings: tuple[float, ...]) -> Turn:
    replies = tuple(
        Response(id=f"r{k}", text=f"Candidate {k} to message {index}.", rating=r)
        for k, r in enumerate(ratings)
    )
    return Turn(index=index, user=f"Message {index}.", responses=replies, continued="r0")


def drifting(n: int = 8, cid: str = "drift") -> Conversation:
    """Ratings that rise over the conversation: the later reply is mostly the better one."""
    ratings = [1, 2, 1, 3, 2, 4, 3, 5, 4, 5][:n]
    return conversation([rated_turn(i, r) for i, r in enumerate(ratings)], cid=cid)


def test_across_turn_pairs_are_balanced_and_the_gap_is_in_the_gold() -> None:
    conv = drifting()
    for seed in range(20):
        pairs = p.derived_pairs(conv, cap=6, seed=seed)
        assert pairs and all(pair.across_turns and pair.derived for pair in pairs)
        golds = [pair.gold() for pair in pairs]
        later_wins = sum(g.later == g.key for g in golds)
        assert later_wins == len(golds) - later_wins  # as many earlier as later
        ratings = {f"{t.index}:a": t.responses[0].rating for t in conv.turns}
        for g in golds:
            assert g.gap == abs(ratings[g.first] - ratings[g.second]) > 0  # type: ignore[operator]
            assert g.key == max((g.first, g.second), key=lambda k: ratings[k])  # type: ignore[arg-type, return-value]


def test_pairs_are_drawn_without_favouring_wide_gaps() -> None:
    # gaps from 1 to 4 both where the earlier and where the later reply won
    conv = conversation([rated_turn(i, r) for i, r in enumerate([3, 1, 5, 2, 4, 1, 5, 3])])
    # every across-turn pair the conversation offers, by which of its replies won
    pools: dict[bool, list[tuple[str, float]]] = {True: [], False: []}
    rated = [(t.index, t.responses[0].rating) for t in conv.turns]
    for i, (turn_a, rating_a) in enumerate(rated):
        for turn_b, rating_b in rated[i + 1 :]:
            if rating_a != rating_b:
                gap = abs(rating_a - rating_b)  # type: ignore[operator]
                pools[rating_b > rating_a].append((f"{turn_a}:a~{turn_b}:a", gap))  # type: ignore[operator]
    drawn: dict[bool, Counter[str]] = {True: Counter(), False: Counter()}
    seeds = 600
    for seed in range(seeds):
        for pair in p.derived_pairs(conv, cap=4, seed=seed):
            gold = pair.gold()
            drawn[gold.later == gold.key][pair.item_id] += 1
    for later_won, pool in pools.items():
        gaps = dict(pool)
        draws = drawn[later_won]
        assert sum(draws.values()) == 2 * seeds  # two of each kind per draw (cap 4)
        # each pair of a pool is as likely as any other: about 2 / len(pool) of the draws
        expected = 2 / len(pool)
        for item_id in gaps:
            assert draws[item_id] / seeds == pytest.approx(expected, abs=0.05), item_id
        mean_drawn = sum(gaps[k] * n for k, n in draws.items()) / sum(draws.values())
        mean_pool = sum(gaps.values()) / len(gaps)
        assert mean_drawn == pytest.approx(mean_pool, abs=0.1)
        # what keeping the widest gaps first would draw, for scale
        widest = sum(sorted(gaps.values())[-2:]) / 2
        assert widest - mean_pool > 1.0 and mean_drawn < widest - 0.8


def test_same_message_pairs_come_first() -> None:
    turns = [rated_turn(i, r) for i, r in enumerate([1, 5, 2, 4])]
    turns.append(same_message_turn(4, (1.0, 3.0, 5.0)))  # three same-message pairs
    conv = conversation(turns)
    for cap, across in ((3, 0), (2, 0), (5, 2), (7, 4)):
        pairs = p.derived_pairs(conv, cap=cap, seed=1)
        same = [pair for pair in pairs if not pair.across_turns]
        assert len(same) == min(cap, 3), cap
        assert len(pairs) - len(same) == across, cap
    items = list(make_task("preference", max_derived_pairs=3).items([conv]))
    assert [i.item_id for i in items] == ["r0~r1", "r0~r2", "r1~r2"]
    assert all(i.gold.gap is not None for i in items)


def test_a_derived_pair_needs_different_ratings_and_recorded_picks_are_not_derived() -> None:
    conv = conversation([rated_turn(0, 3), rated_turn(1, 3), same_message_turn(2, (2.0, 2.0))])
    assert p.derived_pairs(conv, cap=4, seed=0) == []
    assert list(make_task("preference", derive_from_ratings=False).items([drifting()])) == []


def rated_corpora(
    esconv: dict[tuple[str, str], list[Conversation]], uss: dict[str, list[Conversation]]
) -> dict[str, list[Conversation]]:
    corpora = {f"esconv-{variant}-{split}": c for (variant, split), c in esconv.items()}
    corpora.update({f"uss-{part}": c for part, c in uss.items()})
    return corpora


def has_rated_replies(conversations: list[Conversation]) -> bool:
    return any(r.rating is not None for c in conversations for t in c.turns for r in t.responses)


def test_later_reply_scores_chance_on_the_balanced_pairs_of_every_rated_corpus(
    esconv: dict[tuple[str, str], list[Conversation]], uss: dict[str, list[Conversation]]
) -> None:
    task = make_task("preference")
    rated = {}
    for name, conversations in rated_corpora(esconv, uss).items():
        if not has_rated_replies(conversations):
            continue
        items = list(task.items(conversations))
        golds = [(i.conversation.id, i.gold) for i in items if i.gold.across_turns]
        scores = [s for s in LATER(golds) if s is not None]
        assert len(scores) >= 300, name
        rated[name] = sum(scores) / len(scores)
        assert rated[name] == pytest.approx(0.5, abs=0.05), name
        # the rating gap of every derived pair is in its gold
        assert all(g.derived and g.gap and g.gap > 0 for _, g in golds), name
    assert set(rated) >= {
        "esconv-failed-all",
        "esconv-multiesc-valid",
        "esconv-multiesc-test",
        "uss-mwoz",
        "uss-redial",
    }, rated


def test_the_references_on_hand_made_golds() -> None:
    gold = p.PairGold(
        first="0:a",
        second="3:a",
        chosen="3:a",
        first_turn=0,
        second_turn=3,
        len_first=5,
        len_second=9,
    )
    same = gold.model_copy(update={"second_turn": 0, "chosen": "0:a"})
    assert LATER([("c", gold), ("c", same)]) == [1.0, None]
    assert LONGER([("c", gold), ("c", same)]) == [1.0, 0.0]
    tie = gold.model_copy(update={"len_second": 5})
    assert LONGER([("c", tie)]) == [0.0]  # equal lengths: the heuristic says tie, gold does not
