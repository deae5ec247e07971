"""knn's query embeddings: the texts of concurrent calls encoded in one pass, never changing
an answer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from knn_harness import HashEncoder

from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.engine import RECORDS_FILE, RunConfig, read_records, run
from attunebench.models.baselines import KnnBaseline
from attunebench.models.baselines.knn import KnnOptions
from attunebench.models.embeddings import QueryBatcher, encode_stored
from attunebench.models.modelsfile import ModelEntry

TEXTS = [f"text number {i} about feeling {word}" for i, word in enumerate("sad glad mad" * 6)]


async def test_concurrent_texts_share_one_pass_and_get_their_own_rows() -> None:
    encoder = HashEncoder()
    batcher = QueryBatcher(encoder.encode)
    rows = await asyncio.gather(*(batcher.embed(text) for text in TEXTS))
    assert encoder.calls == 1 and batcher.passes == 1
    alone = HashEncoder().encode(TEXTS)
    for row, expected in zip(rows, alone, strict=True):
        np.testing.assert_array_equal(row, expected)  # the planted truth: each text's own row


async def test_a_text_seen_before_is_not_encoded_again() -> None:
    encoder = HashEncoder()
    batcher = QueryBatcher(encoder.encode)
    await asyncio.gather(batcher.embed("the same"), batcher.embed("the same"))
    await batcher.embed("the same")
    assert encoder.encoded == 1


async def test_a_failed_pass_fails_every_waiting_call_and_the_next_one_works() -> None:
    calls = 0

    def flaky(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("encoder fell over")
        return HashEncoder().encode(texts)

    batcher = QueryBatcher(flaky)
    results = await asyncio.gather(*(batcher.embed(t) for t in TEXTS[:3]), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    assert (await batcher.embed(TEXTS[0])).shape == (512,)


@pytest.mark.parametrize("task", ["emotion", "preference"])
async def test_batching_changes_no_answer(tmp_path: Path, task: str) -> None:
    """The same run, one call at a time and sixteen at once: the same predictions, fewer passes."""
    sample = read_conversations(sample_path())
    data, train = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    write_conversations(data, sample[1::2])
    write_conversations(train, sample[0::2])
    predictions, passes = [], []
    for concurrency in (1, 16):
        encoder = HashEncoder()
        provider = KnnBaseline("baseline/knn", KnnOptions(train=train, k=3), encoder=encoder)
        out = tmp_path / f"run-{concurrency}"
        config = RunConfig(
            data=data,
            out=out,
            models=(ModelEntry.from_spec("baseline/knn"),),
            tasks=(task,),
            concurrency=concurrency,
            cache_path=None,
            progress=False,
        )
        result = await run(config, providers={"baseline/knn": provider})
        assert result.complete
        records = sorted(read_records(out / RECORDS_FILE), key=lambda r: r.key)
        predictions.append([(r.key, r.prediction) for r in records])
        passes.append(encoder.calls)
    assert predictions[0] == predictions[1]
    assert passes[1] < passes[0]


def test_a_repeated_train_text_is_encoded_once(tmp_path: Path) -> None:
    texts = ["I chose this one", "not that one", "I chose this one", "I chose this one"]
    encoder = HashEncoder()
    rows = encode_stored(encoder, texts, tmp_path)
    assert encoder.encoded == 2  # the planted truth: two distinct texts
    np.testing.assert_array_equal(rows, HashEncoder().encode(texts))  # every row in its place
    again = HashEncoder()
    np.testing.assert_array_equal(encode_stored(again, texts, tmp_path), rows)
    assert again.encoded == 0  # stored under the distinct texts, loaded back
