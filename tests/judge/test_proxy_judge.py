"""The offline proxy judge: hand-made embeddings pin its rules; MiniLM runs it for real."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from attunebench.answerform import TaskHint
from attunebench.models.base import GenerateParams, ProviderError
from attunebench.models.proxy import ProxyJudge, rubric_score
from attunebench.models.registry import make_provider


class TableEncoder:
    """Unit vectors from a lookup table, so every cosine is known by hand."""

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = {k: np.asarray(v, np.float32) / np.linalg.norm(v) for k, v in table.items()}

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.stack([self.table[t] for t in texts])


ENCODER = TableEncoder(
    {
        "chosen": [1, 0, 0],
        "rejected": [0, 1, 0],
        "wanted": [0, 0, 1],
        "user": [1, 1, 0],
        "near chosen": [1, 0, 1],
        "near rejected": [0, 1, 1],
        "plain": [1, 1, 1],
    }
)


async def answer(hint: TaskHint) -> dict[str, object]:
    output = await ProxyJudge("table", encoder=ENCODER).generate([], GenerateParams(), hint)
    return json.loads(output.text)


async def test_rubric_maps_chosen_minus_rejected_similarity_onto_one_to_ten() -> None:
    reference = {"chosen": "chosen", "rejected": "rejected", "wanted": "wanted"}
    near = await answer(
        TaskHint("judge_rubric", candidates={"A": "near chosen"}, reference=reference)
    )
    # cos(near chosen, chosen) = 1/sqrt(2), cos(near chosen, rejected) = 0
    assert near["score"] == rubric_score(1 / np.sqrt(2)) == 8.7
    far = await answer(
        TaskHint("judge_rubric", candidates={"A": "near rejected"}, reference=reference)
    )
    assert far["score"] == rubric_score(-1 / np.sqrt(2)) == 2.3
    assert "proxy" in str(near["reason"])


async def test_pairwise_goes_by_the_participants_words_and_never_by_a_candidate_reference() -> None:
    hint = TaskHint(
        "judge_pairwise",
        text="user",
        candidates={"A": "near rejected", "B": "chosen"},
        reference={"wanted": "wanted"},
    )
    # cos(near rejected, wanted) = 0.71 > cos(chosen, wanted) = 0
    assert (await answer(hint))["winner"] == "A"
    # were the references passed anyway, one being a candidate, they are ignored alike
    leaked = TaskHint(
        "judge_pairwise",
        text="user",
        candidates=hint.candidates,
        reference={"chosen": "chosen", "rejected": "rejected", "wanted": "wanted"},
    )
    assert (await answer(leaked))["winner"] == "A"
    # without their words, relevance to the user's message decides: cos(plain, user) > cos(...)
    bare = TaskHint("judge_pairwise", text="user", candidates={"A": "wanted", "B": "plain"})
    assert (await answer(bare))["winner"] == "B"
    same = TaskHint("judge_pairwise", text="user", candidates={"A": "plain", "B": "plain"})
    assert (await answer(same))["winner"] == "tie"


async def test_the_proxy_answers_only_judge_hints() -> None:
    with pytest.raises(ProviderError, match="only judges") as raised:
        judge = ProxyJudge("table", encoder=ENCODER)
        await judge.generate([], GenerateParams(), TaskHint("emotion"))
    assert not raised.value.retryable


@pytest.mark.slow
async def test_minilm_prefers_the_reply_that_matches_what_the_person_wanted() -> None:
    judge = make_provider("proxy/minilm")
    assert judge.spec == "proxy/minilm"
    hint = TaskHint(
        "judge_pairwise",
        text="My grandmother died last week and I can't stop crying.",
        candidates={
            "A": "Here are five tips for a productive morning routine.",
            "B": "I'm so sorry about your grandmother. Grief like this is so hard.",
        },
        reference={"wanted": "Someone to acknowledge my grief and be kind about my loss."},
    )
    output = await judge.generate([], GenerateParams(), hint)
    assert json.loads(output.text)["winner"] == "B"
