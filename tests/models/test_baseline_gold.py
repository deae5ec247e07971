"""What the baselines learn beyond turn labels: ratings and outcomes (random uniform on the
scale, majority means, knn means of the nearest, reading the person as well as the reply),
ESConv's conversation-level emotion, and the refusal of a train split that overlaps the
evaluated data."""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from baseline_harness import asked, taught
from knn_harness import HashEncoder
from typer.testing import CliRunner

from attunebench.answerform import TaskHint
from attunebench.cli import app
from attunebench.data.derived import conversation_level
from attunebench.data.importers import ESConvImporter
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.models.base import GenerateParams, Preparation
from attunebench.models.baselines import KnnBaseline, base
from attunebench.models.baselines.knn import KnnOptions
from attunebench.models.registry import Provider, make_provider
from testkit.servers import form_of

PARAMS = GenerateParams()

# Three conversations: the replies a person rated, and what they reported afterwards.
RATED = [
    (
        "I lost my job today and I do not know how to tell my family.",
        [
            ("Losing a job is frightening; what worries you most about telling them?", 5.0),
            ("Just get another job then.", 1.0),
        ],
        {"final_intensity": 2, "empathy": 5, "relevance": 4},
    ),
    (
        "My sister stopped talking to me after our argument.",
        [
            ("That silence must hurt; what was the argument about?", 4.0),
            ("Families fight, forget it.", 2.0),
        ],
        {"final_intensity": 3, "empathy": 4, "relevance": 2},
    ),
    (
        "I failed my driving test again.",
        [("Whatever, it is only a test.", 2.0), ("Failing twice is discouraging.", 3.0)],
        {"final_intensity": 4, "empathy": 1, "relevance": 3},
    ),
]


def rated_conversation(number: int, prefix: str = "rated") -> Conversation:
    """A user message, two replies each rated by the user's next feedback, and an outcome."""
    opening, replies, outcome = RATED[number]
    turns: list[dict[str, Any]] = [{"user": opening, "state": {"intensity": 4}}]
    for text, _ in replies:
        turns[-1]["responses"] = [{"id": "r", "text": text}]
        turns[-1]["continued"] = "r"
        turns.append({"user": "ok."})
    for turn, (_, rating) in zip(turns[1:], replies, strict=True):
        turn["feedback"] = rating
    survey = {k: v for k, v in outcome.items() if k != "final_intensity"}
    return Conversation.model_validate(
        {
            "id": f"{prefix}-{number}",
            "source": {"kind": "sample", "name": "baseline-gold-tests"},
            "taxonomy": "attunebench-default",
            "turns": [{"index": i, **turn} for i, turn in enumerate(turns)],
            "outcome": {"final_state": {"intensity": outcome["final_intensity"]}, "survey": survey},
        }
    )


@pytest.fixture
def rated_train(tmp_path: Path) -> Path:
    path = tmp_path / "rated.jsonl"
    write_conversations(path, [rated_conversation(n) for n in range(len(RATED))])
    return path


def rating_hint(text: str, key: str = "item", scale: tuple[str, str] = ("1", "5")) -> TaskHint:
    return TaskHint("rating", text=text, labels=scale, item_key=key, form=form_of("rating"))


def outcome_hint(opening: str, key: str = "item") -> TaskHint:
    fields = ("final_intensity", "empathy")
    return TaskHint(
        "outcome",
        text="ok.",
        labels=fields,
        history=(("user", opening), ("assistant", "I hear you."), ("user", "ok.")),
        reference=dict.fromkeys(fields, "1:5"),
        form=form_of("outcome"),
        item_key=key,
    )


async def answer(provider: Provider, hint: TaskHint) -> dict[str, Any]:
    answered: dict[str, Any] = json.loads((await provider.generate([], PARAMS, hint)).text)
    return answered


def hashed_knn(train: Path, k: int, encoder: HashEncoder | None = None) -> KnnBaseline:
    provider = KnnBaseline("baseline/knn", KnnOptions(train=train, k=k), encoder or HashEncoder())
    taught(provider)
    return provider


def asked_again(task: str, number: int) -> list[TaskHint]:
    """The queries the task asks about a copy of a train conversation (another id)."""
    return asked(task, [rated_conversation(number, prefix="asked")])


async def test_random_rates_uniformly_on_the_scale() -> None:
    provider = make_provider("baseline/random")
    ratings = [(await answer(provider, rating_hint("x", f"k{n}")))["rating"] for n in range(300)]
    assert set(ratings) == {1, 2, 3, 4, 5}  # every point of the scale, nothing off it
    assert max(Counter(ratings).values()) < 90  # about 60 each, none favoured
    wide = {
        (await answer(provider, rating_hint("x", f"w{n}", ("0", "10"))))["rating"]
        for n in range(300)
    }
    assert wide == set(range(11))
    outcomes = [await answer(provider, outcome_hint("x", f"o{n}")) for n in range(200)]
    assert all(set(o) == {"final_intensity", "empathy"} for o in outcomes)
    assert {o["empathy"] for o in outcomes} == {1, 2, 3, 4, 5}


async def test_majority_answers_the_train_means(rated_train: Path) -> None:
    provider = taught(make_provider("baseline/majority", train=str(rated_train)))
    ratings = [rating for _, replies, _ in RATED for _, rating in replies]
    for item in asked_again("rating", 0):
        assert (await answer(provider, item))["rating"] == pytest.approx(statistics.mean(ratings))
    expected = {
        name: pytest.approx(statistics.mean(outcome[name] for _, _, outcome in RATED))
        for name in ("final_intensity", "empathy", "relevance")
    }
    [outcome] = asked_again("outcome", 1)
    assert await answer(provider, outcome) == expected


async def test_knn_answers_the_mean_of_the_nearest(rated_train: Path) -> None:
    nearest = hashed_knn(rated_train, k=1)
    # a copy of a train conversation: each rating's nearest is its own, the outcome's too
    first, second = asked_again("rating", 0)
    assert (await answer(nearest, first))["rating"] == 5.0
    assert (await answer(nearest, second))["rating"] == 1.0
    [outcome] = asked_again("outcome", 2)
    assert await answer(nearest, outcome) == {"final_intensity": 4, "empathy": 1, "relevance": 3}
    # two neighbours, by the mean similarity of the person's message and of the reply, their
    # ratings weighted by it
    encoder, pair = HashEncoder(), hashed_knn(rated_train, k=2)
    examples = pair.examples["rating"]
    reads = [e.hint.form.reads(e.hint) for e in examples if e.hint.form]
    query = dataclasses.replace(first, text="That failing must hurt; what was the test about?")
    assert query.form is not None
    wanted = encoder.encode(list(query.form.reads(query)))
    similarity = [float(np.mean(np.sum(encoder.encode(list(r)) * wanted, axis=1))) for r in reads]
    top_two = np.argsort(-np.array(similarity), kind="stable")[:2]
    ratings = [examples[i].gold["rating"] for i in top_two]
    expected = float(np.average(ratings, weights=[similarity[i] for i in top_two]))
    assert ratings[0] != ratings[1]  # the weights matter here
    assert (await answer(pair, query))["rating"] == pytest.approx(expected, abs=1e-3)
    # every conversation: their mean, pulled towards the nearest (the same one, empathy 1)
    means = await answer(hashed_knn(rated_train, k=3), outcome)
    assert 1 < means["empathy"] < statistics.mean([5, 4, 1])


def told(number: int, person: str, rating: float) -> Conversation:
    """The same reply rated by people who said different things before rating it."""
    turns = [
        {"user": person, "responses": [{"id": "r", "text": "I see."}], "continued": "r"},
        {"user": "ok.", "feedback": rating},
    ]
    return Conversation.model_validate(
        {
            "id": f"told-{number}",
            "source": {"kind": "sample", "name": "baseline-gold-tests"},
            "taxonomy": "attunebench-default",
            "turns": [{"index": i, **turn} for i, turn in enumerate(turns)],
        }
    )


async def test_knn_reads_the_person_as_well_as_the_reply_it_rates(tmp_path: Path) -> None:
    """Known answer: the ratings follow what the person said, not the reply, which is the same
    everywhere (knn's rating examples used to read the reply alone, and answered the same
    whether the person's words were shown or hidden)."""
    train = tmp_path / "told.jsonl"
    glad = "Talking helps, I feel so much better now."
    cross = "This is useless and I am angry at everything."
    write_conversations(train, [told(0, glad, 5.0), told(1, cross, 1.0), told(2, glad, 5.0)])
    provider = hashed_knn(train, k=2)
    [happy] = asked("rating", [told(3, "I feel much better now, it helps.", 3.0)])
    [upset] = asked("rating", [told(4, "I am angry, this is useless.", 3.0)])
    assert (await answer(provider, happy))["rating"] == 5.0
    assert (await answer(provider, upset))["rating"] == pytest.approx(3.0, abs=1.0)
    assert (await answer(hashed_knn(train, k=1), upset))["rating"] == 1.0


THUMBED = [  # a reply and the thumb (0 or 1) the person gave it
    ("I am sorry, that sounds so hard. What happened?", 1.0),
    ("Cheer up, it could be worse.", 0.0),
    ("That must have hurt. Do you want to talk about it?", 1.0),
    ("You should have seen it coming.", 0.0),
    ("I hear you; being left out like that is painful.", 1.0),
]


def thumbed(number: int, prefix: str = "thumbed") -> Conversation:
    """One reply rated with a thumb (0-1), no feedback: a reply rating item of its own scale."""
    text, thumb = THUMBED[number]
    turn = {"user": "My friends went out without me.", "responses": [{"id": "a", "text": text}]}
    return Conversation.model_validate(
        {
            "id": f"{prefix}-{number}",
            "source": {
                "kind": "sample",
                "name": "baseline-gold-tests",
                "rating_scale": {"low": 0, "high": 1},
            },
            "taxonomy": "attunebench-default",
            "turns": [
                {"index": 0, **turn, "responses": [{**turn["responses"][0], "rating": thumb}]}
            ],
        }
    )


async def test_reply_ratings_are_learned_on_their_own_scale(tmp_path: Path) -> None:
    """Known answer: each reply rating item is answered from the train items of its own scale
    (the mean thumb, the nearest reply's thumb). Trap: the 1-5 feedback ratings in the same
    split, pooled with the thumbs, would give a mean off the thumbs' scale."""
    train = tmp_path / "mixed.jsonl"
    rated = [rated_conversation(n) for n in range(len(RATED))]
    write_conversations(train, [*rated, *(thumbed(n) for n in range(len(THUMBED)))])
    majority = taught(make_provider("baseline/majority", train=str(train)))
    nearest = hashed_knn(train, k=1)
    thumbs = [thumb for _, thumb in THUMBED]
    for number, (_, thumb) in enumerate(THUMBED):
        [item] = asked("rating", [thumbed(number, prefix="asked")])
        assert item.labels == ("0", "1")
        assert (await answer(majority, item))["rating"] == pytest.approx(statistics.mean(thumbs))
        assert (await answer(nearest, item))["rating"] == thumb  # its own reply, rated so
    fives = [rating for _, replies, _ in RATED for _, rating in replies]
    for item in asked_again("rating", 0):
        assert (await answer(majority, item))["rating"] == pytest.approx(statistics.mean(fives))


async def test_a_train_split_without_a_tasks_items_does_not_answer_it(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    unrated = [  # no feedback, no rated reply: no rating item
        c.model_copy(
            update={
                "turns": tuple(
                    t.model_copy(
                        update={
                            "responses": tuple(
                                r.model_copy(update={"rating": None}) for r in t.responses
                            )
                        }
                    )
                    for t in c.turns
                )
            }
        )
        for c in read_conversations(sample_path())[:2]
    ]
    write_conversations(plain, unrated)
    form = form_of("rating")
    for spec in ("baseline/majority", "baseline/knn"):
        provider = taught(make_provider(spec, train=str(plain)))
        assert not provider.answers_form(form)
        assert f"{plain} has no item asking 'rating' questions" in provider.unsupported_reason(
            "rating"
        )
        with pytest.raises(Exception, match="has no item asking 'rating' questions"):
            await provider.generate([], PARAMS, rating_hint("x"))


# --- ESConv -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def esconv_train(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ESConv's train split (a conversation-level emotion each) and its failed sessions (the
    seekers' per-turn feedback), imported as `data import` does."""
    source = data_dir / "esconv"
    conversations = [
        *ESConvImporter(variant="hf", split="train").read(source, Counter()),
        *ESConvImporter(variant="failed", split="all").read(source, Counter()),
    ]
    path = tmp_path_factory.mktemp("esconv") / "train.jsonl"
    write_conversations(path, conversations)
    return path


async def test_esconv_conversation_emotions_are_learned_as_the_task_reads_them(
    esconv_train: Path,
) -> None:
    conversations = read_conversations(esconv_train)
    level = [c for c in conversations if conversation_level(c)]
    majority = taught(make_provider("baseline/majority", train=str(esconv_train)), "emotion")
    assert isinstance(majority, base.Fitted)
    assert len(level) > 1000 and len(majority.examples["emotion"]) == len(level)
    emotions = Counter(str(c.context.emotion) for c in level)
    guess = await answer(majority, asked("emotion", level[:1])[0])
    assert guess["primary"] == emotions.most_common(1)[0][0]
    openings = [c.turns[0].state.intensity for c in level if c.turns[0].state is not None]
    assert guess["intensity"] == pytest.approx(statistics.mean(i for i in openings if i))


async def test_esconv_knn_finds_a_conversation_by_its_opening_and_keeps_its_vectors(
    esconv_train: Path, tmp_path: Path
) -> None:
    conversations = [c for c in read_conversations(esconv_train) if conversation_level(c)]
    encoder = HashEncoder()
    provider = hashed_knn(esconv_train, 1, encoder)
    kinds = frozenset({"emotion", "preference"})
    await provider.prepare(Preparation(kinds, tmp_path))
    # Each distinct text of a kind is embedded once (replies recur across pairs).
    texts = {
        t
        for kind in kinds
        for e in provider.examples[kind]
        if e.hint.form
        for t in e.hint.form.reads(e.hint)
    }
    assert encoder.encoded == len(texts)
    target = conversations[123]
    [item] = asked("emotion", [target])
    assert target.turns[0].user in item.text  # the opening words, as the task shows them
    assert (await answer(provider, item))["primary"] == target.context.emotion

    again = HashEncoder()
    await hashed_knn(esconv_train, 1, again).prepare(Preparation(kinds, tmp_path))
    assert again.encoded == 0  # a second run on this train split loads, never re-encodes


# --- overlapping train splits -----------------------------------------------------------------


@pytest.mark.parametrize("spec", ["baseline/majority", "baseline/knn"])
@pytest.mark.parametrize("overlap", ["same file", "shared ids"])
def test_a_train_split_overlapping_the_data_is_refused_in_one_line(
    tmp_path: Path, spec: str, overlap: str
) -> None:
    sample = read_conversations(sample_path())
    data = tmp_path / "eval.jsonl"
    write_conversations(data, sample[:4])
    train = data
    if overlap == "shared ids":
        train = tmp_path / "train.jsonl"
        write_conversations(train, sample[3:8])  # sample[3] is in both
    out = tmp_path / "run"
    model = f"{spec}?train={train}"
    command = ["run", "--data", str(data), "--out", str(out), "--model", model, "--task", "emotion"]
    result = CliRunner().invoke(app, [*command, "--no-cache", "--no-progress"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    [line] = lines
    if overlap == "same file":
        assert line == f"error: {spec}?train={train}: the train split is the evaluated data"
    else:
        assert line.startswith(f"error: {spec}?train={train}: train split {train} shares 1 ")
        assert repr(sample[3].id) in line and "fit on a disjoint split" in line
    assert "Traceback" not in result.output and not out.exists()
