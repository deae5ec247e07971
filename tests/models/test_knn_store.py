"""knn's slow step, embedding its train split: done in `prepare` before the first call, kept by
content hash across runs, and stopped within a chunk by an interrupt that says what it waits
for."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest
from baseline_harness import taught
from knn_harness import HashEncoder

from attunebench.answerform import HintKind, TaskHint
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.engine import RunConfig, read_run_info, run
from attunebench.models.base import GenerateParams, Preparation
from attunebench.models.baselines import KnnBaseline
from attunebench.models.baselines.knn import EMBEDDINGS_FOLDER, KnnOptions
from attunebench.models.embeddings import CHUNK, encode_stored
from attunebench.models.modelsfile import ModelEntry
from testkit.servers import form_of

SPEC = "baseline/knn"
FORM = form_of("emotion")


@pytest.fixture
def split(tmp_path: Path) -> tuple[Path, Path]:
    """The sample cut in two: evaluated data and a disjoint train split."""
    sample = read_conversations(sample_path())
    data, train = tmp_path / "eval.jsonl", tmp_path / "train.jsonl"
    write_conversations(data, sample[1::2])
    write_conversations(train, sample[0::2])
    return data, train


def knn(train: Path, encoder: HashEncoder, k: int = 1) -> KnnBaseline:
    """knn fitted on `train`, taught its examples as a run teaches them."""
    provider = KnnBaseline(SPEC, KnnOptions(train=train, k=k), encoder=encoder)
    taught(provider)
    return provider


def distinct(provider: KnnBaseline, kind: HintKind) -> int:
    """The distinct texts the examples of a kind are compared by (each encoded once)."""
    return len(
        {t for e in provider.examples[kind] if e.hint.form for t in e.hint.form.reads(e.hint)}
    )


async def prepare(
    provider: KnnBaseline, folder: Path | None, *kinds: HintKind, said: list[str] | None = None
) -> None:
    report = said.append if said is not None else (lambda message: None)
    await provider.prepare(Preparation(frozenset(kinds), folder, report))


def stored(folder: Path) -> list[Path]:
    return sorted((folder / EMBEDDINGS_FOLDER).glob("*.npy"))


async def test_a_second_preparation_loads_the_train_split_instead_of_encoding_it(
    tmp_path: Path, split: tuple[Path, Path]
) -> None:
    _, train = split
    first, said = HashEncoder(), []
    provider = knn(train, first)
    await prepare(provider, tmp_path, "emotion", "behavior", said=said)
    texts = distinct(provider, "emotion") + distinct(provider, "behavior")
    assert first.encoded == texts > 0 and len(stored(tmp_path)) == 2
    emotion = len(provider.examples["emotion"])  # one text each
    assert f"encoding its train split ({emotion} emotion texts)" in said

    second = HashEncoder()
    again = knn(train, second)
    await prepare(again, tmp_path, "emotion", "behavior")
    assert second.encoded == 0  # both matrices loaded
    labels = provider.examples["emotion"][0].hint.labels  # the sample's label set
    item = TaskHint("emotion", text="I am so worried about my exam", labels=labels, form=FORM)
    params = GenerateParams()
    answers = [(await p.generate([], params, item)).text for p in (provider, again)]
    assert answers[0] == answers[1] and second.encoded == 1  # only the query was encoded


async def test_the_store_is_keyed_by_encoder_and_texts(
    tmp_path: Path, split: tuple[Path, Path]
) -> None:
    _, train = split
    await prepare(knn(train, HashEncoder()), tmp_path, "emotion")

    class Other(HashEncoder):
        name = "tests/another-encoder"

    other = Other()
    await prepare(knn(train, other), tmp_path, "emotion")
    assert other.encoded > 0  # another encoder's vectors are not these

    conversations = read_conversations(train)
    first = conversations[0]
    edited_turn = first.turns[0].model_copy(update={"user": first.turns[0].user + " Edited."})
    edited = first.model_copy(update={"turns": (edited_turn, *first.turns[1:])})
    write_conversations(train, [edited, *conversations[1:]])
    changed = HashEncoder()
    await prepare(knn(train, changed), tmp_path, "emotion")
    assert changed.encoded == distinct(knn(train, HashEncoder()), "emotion")
    assert len(stored(tmp_path)) == 3


async def test_a_damaged_matrix_is_encoded_again_and_no_folder_stores_nothing(
    tmp_path: Path, split: tuple[Path, Path]
) -> None:
    _, train = split
    await prepare(knn(train, HashEncoder()), tmp_path, "emotion")
    [path] = stored(tmp_path)
    path.write_bytes(path.read_bytes()[:100])  # a crash mid-write, or a full disk
    repaired = HashEncoder()
    await prepare(knn(train, repaired), tmp_path, "emotion")
    assert repaired.encoded > 0 and len(stored(tmp_path)) == 1
    assert len(path.read_bytes()) > 100

    nowhere = HashEncoder()
    await prepare(knn(train, nowhere), None, "emotion")
    again = HashEncoder()
    await prepare(knn(train, again), None, "emotion")
    assert nowhere.encoded == again.encoded > 0
    assert len(stored(tmp_path)) == 1


async def test_only_the_kinds_asked_are_encoded(tmp_path: Path, split: tuple[Path, Path]) -> None:
    _, train = split
    encoder = HashEncoder()
    provider = knn(train, encoder)
    await prepare(provider, tmp_path, "judge_pairwise", "judge_rubric")  # rubric: not answered
    assert encoder.encoded == distinct(provider, "judge_pairwise") > 0
    assert len(stored(tmp_path)) == 1


def config(data: Path, train: Path, out: Path, cache: Path | None) -> RunConfig:
    entry = ModelEntry(name=SPEC, spec=SPEC, options={"train": str(train)})
    return RunConfig(
        data=data,
        out=out,
        models=(entry,),
        tasks=("emotion",),
        cache_path=cache,
        progress=False,
        check_servers=False,
    )


async def test_a_second_run_on_the_same_train_split_encodes_only_its_queries(
    tmp_path: Path, split: tuple[Path, Path]
) -> None:
    data, train = split
    cache = tmp_path / "cache" / "cache.sqlite"
    first = HashEncoder()
    one = await run(
        config(data, train, tmp_path / "one", cache), providers={SPEC: knn(train, first)}
    )
    assert one.complete and one.totals.calls > 0
    assert first.encoded == distinct(knn(train, HashEncoder()), "emotion") + one.totals.calls
    assert len(stored(cache.parent)) == 1  # beside the response cache

    second = HashEncoder()
    two = await run(
        config(data, train, tmp_path / "two", cache), providers={SPEC: knn(train, second)}
    )
    assert two.complete and second.encoded == two.totals.calls == one.totals.calls

    finished = HashEncoder()
    again = await run(
        config(data, train, tmp_path / "two", cache), providers={SPEC: knn(train, finished)}
    )
    assert again.complete and again.totals.calls == 0 and finished.encoded == 0


def many_openings(path: Path, count: int) -> Path:
    """A train split of `count` conversations, each one opening message with an emotion."""
    source = {"kind": "sample", "name": "knn-store-tests"}
    conversations = [
        Conversation.model_validate(
            {
                "id": f"train-{n}",
                "source": source,
                "taxonomy": "attunebench-default",
                "turns": [
                    {
                        "index": 0,
                        "user": f"message {n} about my week",
                        "state": {"primary": "sadness" if n % 2 else "joy"},
                    }
                ],
            }
        )
        for n in range(count)
    ]
    write_conversations(path, conversations)
    return path


async def test_an_interrupt_while_encoding_stops_within_a_chunk_and_says_so(
    tmp_path: Path, split: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = split
    train = many_openings(tmp_path / "big-train.jsonl", 12 * CHUNK)
    encoder = HashEncoder(delay_s=0.2)  # 12 chunks: about 2.4 s to encode
    cache = tmp_path / "cache.sqlite"
    running = asyncio.create_task(
        run(config(data, train, tmp_path / "run", cache), providers={SPEC: knn(train, encoder)})
    )
    while not encoder.started.is_set():
        await asyncio.sleep(0.01)
    calls_at_interrupt = encoder.calls
    interrupted = time.monotonic()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    while True:  # the encoding thread: it stops at the next chunk
        before = encoder.calls
        await asyncio.sleep(0.5)
        if encoder.calls == before:
            break
    assert encoder.calls - calls_at_interrupt <= 1
    assert time.monotonic() - interrupted < 2.0
    err = capsys.readouterr().err
    assert "interrupted: waiting for baseline/knn to stop encoding its train split (" in err
    assert not stored(tmp_path)  # nothing half-stored
    info = read_run_info(tmp_path / "run")
    assert info is not None and not info.complete


def test_stored_rows_keep_the_texts_order_whatever_order_they_are_encoded_in(
    tmp_path: Path,
) -> None:
    texts = [f"{'word ' * (n % 7)}text number {n}" for n in range(3 * CHUNK + 5)]
    encoder = HashEncoder()
    stored_rows = encode_stored(encoder, texts, tmp_path)
    np.testing.assert_array_equal(stored_rows, HashEncoder().encode(texts))
    assert encoder.calls == 4  # in chunks
    np.testing.assert_array_equal(encode_stored(encoder, texts, tmp_path), stored_rows)
    assert encoder.calls == 4  # the second time, loaded
