"""Pairs derived from ratings: same-message pairs first, across-turn pairs balanced so that
position alone scores chance, drawn without favouring wide rating gaps, the gap kept in the gold.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter

from task_harness import conversation, make_task, rated_turn

from attunebench.data.schema import Conversation, Response, Turn
from attunebench.tasks.helpers.fitting import out_of_sample
from attunebench.tasks.helpers.pairs import EARLY_STEP, STRATA, PairGold, derived_pairs

REFERENCES = make_task("preference").scoring.references()
POSITION_CUES = (
    "reference/later-reply",
    "reference/earlier-reply",
    "reference/distance",
    "reference/visible-position-classifier",
)


def scores(name: str, golds: list[tuple[str, PairGold]]) -> list[float | None]:
    """A reference's per-item score (None: no guess), fitted as the report fits it (cross-fitted
    by conversation where it fits anything)."""
    ids, found = [cid for cid, _ in golds], [gold for _, gold in golds]
    guesses = out_of_sample(REFERENCES[name], found, ids).guesses
    return [None if g is None else g[1].score for g in guesses]


def later(golds: list[tuple[str, PairGold]]) -> list[float | None]:
    return scores("reference/later-reply", golds)


def longer(golds: list[tuple[str, PairGold]]) -> list[float | None]:
    return scores("reference/longer-reply", golds)


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
        pairs = derived_pairs(conv, cap=6, seed=seed)
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
    # every across-turn pair the conversation offers, by stratum and which of its replies won
    pools: dict[tuple[tuple[int, int], bool], dict[str, float]] = {}
    rated = [(t.index, t.responses[0].rating) for t in conv.turns]
    for i, (turn_a, rating_a) in enumerate(rated):
        for turn_b, rating_b in rated[i + 1 :]:
            if rating_a != rating_b:
                gap = abs(rating_a - rating_b)  # type: ignore[operator]
                stratum = (bisect_right(STRATA, turn_b - turn_a), turn_a // EARLY_STEP)
                key = (stratum, rating_b > rating_a)  # type: ignore[operator]
                pools.setdefault(key, {})[f"{turn_a}:a~{turn_b}:a"] = gap
    drawn: Counter[str] = Counter()
    seeds = 600
    for seed in range(seeds):
        pairs = derived_pairs(conv, cap=4, seed=seed)
        assert len(pairs) == 4  # two matched twos
        drawn.update(pair.item_id for pair in pairs)
    compared = 0
    for (stratum, later_won), pool in pools.items():
        if (stratum, not later_won) not in pools or len(pool) < 2:
            continue
        # within a stratum, each pair of a pool is as likely as any other, whatever its gap
        rates = [drawn[item_id] / seeds for item_id in pool]
        assert max(rates) - min(rates) < 0.1, (stratum, later_won, rates)
        compared += 1
    assert compared >= 2
    # a pair whose stratum holds no pair won the other way is never drawn
    for (stratum, later_won), pool in pools.items():
        if (stratum, not later_won) not in pools:
            assert all(drawn[item_id] == 0 for item_id in pool)


def test_same_message_pairs_come_first() -> None:
    turns = [rated_turn(i, r) for i, r in enumerate([1, 5, 2, 4])]
    turns.append(same_message_turn(4, (1.0, 3.0, 5.0)))  # three same-message pairs
    conv = conversation(turns)
    for cap, across in ((3, 0), (2, 0), (5, 2), (7, 4)):
        pairs = derived_pairs(conv, cap=cap, seed=1)
        same = [pair for pair in pairs if not pair.across_turns]
        assert len(same) == min(cap, 3), cap
        assert len(pairs) - len(same) == across, cap
    items = list(make_task("preference", max_derived_pairs=3).items([conv]))
    assert [i.item_id for i in items] == ["r0~r1", "r0~r2", "r1~r2"]
    assert all(i.gold.gap is not None for i in items)


def test_a_derived_pair_needs_different_ratings_and_recorded_picks_are_not_derived() -> None:
    conv = conversation([rated_turn(0, 3), rated_turn(1, 3), same_message_turn(2, (2.0, 2.0))])
    assert derived_pairs(conv, cap=4, seed=0) == []
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
        found = [s for s in later(golds) if s is not None]
        assert len(found) >= 150, name
        rated[name] = sum(found) / len(found)
        assert rated[name] == 0.5, name  # balanced within each conversation's strata
        for cue in POSITION_CUES:  # no position cue reads the gold off these pairs
            hits = [s for s in scores(cue, golds) if s is not None]
            assert sum(hits) / len(hits) <= 0.55, (name, cue)
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
    gold = PairGold(
        first="0:a",
        second="3:a",
        chosen="3:a",
        first_turn=0,
        second_turn=3,
        len_first=5,
        len_second=9,
    )
    same = gold.model_copy(update={"second_turn": 0, "chosen": "0:a"})
    assert later([("c", gold), ("c", same)]) == [1.0, None]
    assert scores("reference/earlier-reply", [("c", gold), ("c", same)]) == [0.0, None]
    assert longer([("c", gold), ("c", same)]) == [1.0, 0.0]
    tie = gold.model_copy(update={"len_second": 5})
    # equal lengths: the cue has no preference, half right (never "tie", which gold is not)
    assert longer([("c", tie)]) == [0.5]
    asks = gold.model_copy(
        update={
            "cues_first": {"questions": 0.0, "overlap": 0.5},
            "cues_second": {"questions": 2.0, "overlap": 0.5},
        }
    )
    assert scores("reference/more-questions", [("c", asks)]) == [1.0]
    assert scores("reference/more-overlap", [("c", asks)]) == [0.5]
    assert scores("reference/more-questions", [("c", gold)]) == [None]  # cue not kept
