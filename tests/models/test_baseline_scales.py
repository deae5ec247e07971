"""Fitted baselines keep rating scales apart: a train split mixing 1-5 ratings with 0-1 thumbs
(as the open suite mixes ESConv and Topical-Chat with ConvAI1) is fitted per scale (an item's
form asks the same question only on the same scale), and a scale the split never showed gets
no answer: a value learned on another scale says nothing about it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from baseline_harness import taught
from knn_harness import HashEncoder

from attunebench.answerform import TaskHint
from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import Conversation
from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.baselines import KnnBaseline
from attunebench.models.baselines.knn import KnnOptions
from attunebench.models.registry import Provider, make_provider
from testkit.servers import form_of

PARAMS = GenerateParams()
WARM = "That sounds really hard; tell me more about what happened."

# Per scale: each conversation's rated replies and its overall rating. On 1-5 the majority
# (and median) is 4, with the one reply most like WARM rated 5; on 0-1 it is 0.
SPLITS: dict[tuple[float, float], list[tuple[list[tuple[str, float]], float]]] = {
    (1.0, 5.0): [
        ([(WARM, 5.0), ("I see. What else?", 4.0)], 4.0),
        ([("Okay, noted.", 4.0), ("Just move on.", 2.0)], 4.0),
        ([("Right, go on.", 4.0)], 5.0),
    ],
    (0.0, 1.0): [
        ([("Cool. Do you like pizza?", 0.0), ("Ha ha, nice one.", 0.0)], 0.0),
        ([("What music do you listen to?", 0.0), ("I love dogs too!", 1.0)], 0.0),
    ],
}


def conversation(number: int, scale: tuple[float, float], rated: Any, overall: float) -> Any:
    turns: list[dict[str, Any]] = [{"user": "Hi, can we talk?"}]
    for text, rating in rated:
        turns[-1] |= {"responses": [{"id": "r", "text": text}], "continued": "r"}
        turns.append({"user": "ok.", "feedback": rating})
    return Conversation.model_validate(
        {
            "id": f"scaled-{number}",
            "source": {
                "kind": "sample",
                "name": "baseline-scale-tests",
                "rating_scale": {"low": scale[0], "high": scale[1]},
            },
            "taxonomy": "attunebench-default",
            "turns": [{"index": i, **turn} for i, turn in enumerate(turns)],
            "outcome": {
                "rating": overall,
                "scales": {"rating": {"low": scale[0], "high": scale[1]}},
            },
        }
    )


@pytest.fixture
def mixed_train(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.jsonl"
    found = [(scale, *c) for scale, convs in SPLITS.items() for c in convs]
    write_conversations(path, [conversation(n, *c) for n, c in enumerate(found)])
    return path


def rating_hint(text: str, scale: tuple[str, str]) -> TaskHint:
    return TaskHint("rating", text=text, labels=scale, item_key="i", form=form_of("rating"))


def outcome_hint(scale: str) -> TaskHint:
    return TaskHint(
        "outcome",
        text="ok.",
        labels=("rating",),
        history=(("user", "Hi, can we talk?"),),
        reference={"rating": scale},
        form=form_of("outcome"),
        item_key="i",
    )


async def answer(provider: Provider, hint: TaskHint) -> float:
    answered: dict[str, Any] = json.loads((await provider.generate([], PARAMS, hint)).text)
    value = answered["rating"]
    assert isinstance(value, int | float)
    return float(value)


def knn(train: Path, k: int) -> Provider:
    return taught(KnnBaseline("baseline/knn", KnnOptions(train=train, k=k), HashEncoder()))


async def test_majority_answers_each_scale_its_own_mean(mixed_train: Path) -> None:
    provider = taught(make_provider("baseline/majority", train=str(mixed_train)))
    assert await answer(provider, rating_hint(WARM, ("1", "5"))) == pytest.approx(19 / 5)
    assert await answer(provider, rating_hint(WARM, ("0", "1"))) == 0.25  # not the pooled mean
    assert await answer(provider, outcome_hint("1:5")) == pytest.approx(13 / 3)
    assert await answer(provider, outcome_hint("0:1")) == 0.0


async def test_a_scale_never_seen_in_training_gets_no_answer(mixed_train: Path) -> None:
    # The trap: a 1-5 mean (3.8) is valid on 0-10 but means nothing there.
    for provider in (
        taught(make_provider("baseline/majority", train=str(mixed_train))),
        knn(mixed_train, 1),
    ):
        for hint in (rating_hint(WARM, ("0", "10")), outcome_hint("0:10")):
            with pytest.raises(ProviderError, match=r"no '\w+' item asking this question") as error:
                await answer(provider, hint)
            assert not error.value.retryable


async def test_knn_takes_neighbours_only_from_the_items_scale(mixed_train: Path) -> None:
    assert await answer(knn(mixed_train, 1), rating_hint(WARM, ("1", "5"))) == 5.0  # its own
    # The nearest reply overall is WARM's (rated 5 on 1-5); on a thumb only thumbs count.
    assert await answer(knn(mixed_train, 1), rating_hint(WARM, ("0", "1"))) in (0.0, 1.0)
    every = knn(mixed_train, 10)
    assert 0.0 < await answer(every, rating_hint(WARM, ("0", "1"))) < 1.0
    assert await answer(every, outcome_hint("0:1")) == 0.0
    assert 4.0 < await answer(every, outcome_hint("1:5")) < 5.0  # 4, 4 and 5
