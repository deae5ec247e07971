"""`sim/judge`: each planted bias does what it says, and a plain judge names the truth."""

from __future__ import annotations

import json

import pytest

from attunebench.answerform import TaskHint
from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.registry import SpecError, make_provider
from attunebench.models.sim import FIRST, SECOND, TIE, Comparison, SimJudge

GOLD = {"first": "a", "second": "b", "chosen": "a", "len_first": 40, "len_second": 10}


Authors = tuple[str | None, str | None]


def comparison(unit: int, truth: str = FIRST, authors: Authors = (None, None)) -> list[Comparison]:
    return [
        Comparison(
            unit=f"u{unit}",
            authors=authors,
            lengths=(40, 10),
            truth=truth,
            first_shown_first=shown,
        )
        for shown in (True, False)
    ]


def judge(**options: object) -> SimJudge:
    provider = make_provider("sim/judge", **options)
    assert isinstance(provider, SimJudge)
    return provider


def test_a_plain_judge_names_the_truth_in_both_orders() -> None:
    plain = judge()
    for truth in (FIRST, SECOND, TIE):
        assert {plain.pick(c) for c in comparison(0, truth)} == {truth}


def test_position_flips_exactly_its_share_of_comparisons() -> None:
    biased = judge(position=0.3, seed=4)
    flips = 0
    for unit in range(4000):
        ab, ba = (biased.pick(c) for c in comparison(unit))
        assert ab == FIRST  # shown first, or the truth (the first reply)
        flips += ba == SECOND  # the second reply, shown first in this order
    assert flips / 4000 == pytest.approx(0.3, abs=0.025)


def test_favour_names_the_favoured_models_reply() -> None:
    biased = judge(favour=["m"], favour_by=0.4, seed=1)
    picks = [biased.pick(comparison(u, SECOND, ("m", None))[0]) for u in range(4000)]
    assert picks.count(FIRST) / 4000 == pytest.approx(0.4, abs=0.025)
    assert {biased.pick(comparison(u, SECOND)[0]) for u in range(200)} == {SECOND}


def test_longer_names_the_longer_reply() -> None:
    biased = judge(longer=1.0)
    assert {biased.pick(comparison(u, SECOND)[0]) for u in range(50)} == {FIRST}


async def test_it_answers_the_audit_from_the_gold_and_refuses_without_it() -> None:
    plain = judge()
    hint = TaskHint(kind="judge_pairwise", item_key="judge_audit|c|0|a~b|informed|ba", gold=GOLD)
    output = await plain.generate([], GenerateParams(), hint)
    assert json.loads(output.text or "")["winner"] == "B"  # "a" is shown second
    with pytest.raises(ProviderError, match="gold"):
        await plain.generate([], GenerateParams(), TaskHint(kind="judge_pairwise"))


def test_a_bad_option_is_one_clear_error() -> None:
    with pytest.raises(SpecError, match="sim/judge"):
        make_provider("sim/judge", position=2.0)


def test_the_rubric_scores_a_real_reply_by_the_persons_thumb() -> None:
    plain = judge()

    def score(reply: str, liked: bool | None) -> int:
        gold = {"real": "partner", "real_text": "Owls hunt at night.", "real_liked": liked}
        hint = TaskHint(kind="judge_rubric", candidates={"A": reply}, item_key="i|rubric")
        return plain.score(hint, gold)

    assert [score("Owls hunt at night.", liked) for liked in (True, False, None)] == [8, 2, 5]
    # a model's reply at the same turn is neither liked nor disliked
    assert score("Tell me about owls.", True) == 5
