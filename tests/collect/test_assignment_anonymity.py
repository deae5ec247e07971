"""Pair assignment balance, and the identity-reveal flag."""

from __future__ import annotations

from collections import Counter

import pytest

from attunebench.collect.anonymity import REVEALS_IDENTITY, reply_flags, reveals_identity
from attunebench.collect.assignment import Pair, choose_pair

POOL = ("m/a", "m/b", "m/c", "m/d")


@pytest.mark.parametrize("conversations", [12, 36, 50])
def test_pairs_models_and_positions_stay_balanced(conversations: int) -> None:
    used: Counter[Pair] = Counter()
    position_counts: Counter[tuple[str, str]] = Counter()
    for n in range(conversations):
        pair = choose_pair(POOL, used, seed=n)
        used[pair] += 1
        for turn in range(6):
            for position, model in pair.at_turn(turn).items():
                position_counts[(model, position)] += 1
    pairs = [used[Pair(a, b)] for a in POOL for b in POOL if a != b]
    assert max(pairs) - min(pairs) <= 1
    per_model = Counter(
        m for pair, n in used.items() for m in (pair.first, pair.second) for _ in range(n)
    )
    assert max(per_model.values()) - min(per_model.values()) <= 2
    for model in POOL:  # every model sits in A exactly as often as in B
        assert position_counts[(model, "A")] == position_counts[(model, "B")]


def test_assignment_replays_with_the_same_seed() -> None:
    def run(seed: int) -> list[Pair]:
        used: Counter[Pair] = Counter()
        picks = []
        for n in range(10):
            pair = choose_pair(POOL, used, seed=seed + n)
            used[pair] += 1
            picks.append(pair)
        return picks

    assert run(1) == run(1)
    assert {tuple(run(s)) for s in range(5)} != {tuple(run(1))}


@pytest.mark.parametrize(
    "text",
    [
        "I'm Claude, and I'm here to help.",
        "As ChatGPT, I don't have feelings, but",
        "I am an AI developed by OpenAI.",
        "I'm a large language model trained by Google.",
        "Hi, I’m Gemini!",
        "My name is Llama and I",
        "As an AI assistant called Claude, I",
        "I was created by Anthropic to be helpful.",
    ],
)
def test_identity_reveals_are_flagged(text: str) -> None:
    assert reveals_identity(text)
    assert reply_flags(text) == [REVEALS_IDENTITY]


@pytest.mark.parametrize(
    "text",
    [
        "That sounds hard. Have you told your friend Claude?",
        "I'm sorry you are going through this.",
        "As a first step, try writing it down.",
        "Google it later, for now let's breathe.",
        "I am feeling with you.",
    ],
)
def test_ordinary_replies_are_not_flagged(text: str) -> None:
    assert not reveals_identity(text)


def test_pool_model_names_count_as_identities() -> None:
    assert reveals_identity("I am zeta-listener-7, nice to meet you.", ["mock/zeta-listener-7"])
    assert not reveals_identity("I am zeta-listener-7, nice to meet you.", ["mock/other"])
