"""What the baselines learn beyond turn labels: ratings and outcomes (random uniform on the
scale, majority medians, knn means of the nearest), ESConv's conversation-level emotion and
rating-derived preferences, and the refusal of a train split that overlaps the evaluated data."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from knn_harness import HashEncoder
from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data.derived import conversation_level
from attunebench.data.importers import ESConvImporter
from attunebench.data.jsonl import read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.schema import Conversation
from attunebench.models.base import GenerateParams, Preparation
from attunebench.models.baselines import KnnBaseline, load_train_set
from attunebench.models.baselines.knn import KnnOptions
from attunebench.models.baselines.majority import longer_of
from attunebench.models.hints import TaskHint
from attunebench.models.registry import Provider, make_provider
from attunebench.testing import form_of

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


def rated_conversation(number: int) -> Conversation:
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
            "id": f"rated-{number}",
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
    return KnnBaseline("baseline/knn", KnnOptions(train=train, k=k), encoder or HashEncoder())


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


async def test_majority_answers_the_train_medians(rated_train: Path) -> None:
    provider = make_provider("baseline/majority", train=str(rated_train))
    ratings = [rating for _, replies, _ in RATED for _, rating in replies]
    assert (await answer(provider, rating_hint("anything")))["rating"] == statistics.median(ratings)
    expected = {
        name: statistics.median(outcome[name] for _, _, outcome in RATED)
        for name in ("final_intensity", "empathy")
    }
    assert await answer(provider, outcome_hint("anything")) == expected


async def test_knn_answers_the_mean_of_the_nearest(rated_train: Path) -> None:
    nearest = hashed_knn(rated_train, k=1)
    job_reply = RATED[0][1][0][0]
    assert (await answer(nearest, rating_hint(job_reply)))["rating"] == 5.0
    assert (await answer(nearest, rating_hint("Families fight, forget it.")))["rating"] == 2.0
    query = "That failing must hurt; what was the test about?"
    replies = [(text, rating) for _, rated, _ in RATED for text, rating in rated]
    encoder = HashEncoder()
    similarity = encoder.encode([t for t, _ in replies]) @ encoder.encode([query])[0]
    top_two = np.argsort(-similarity, kind="stable")[:2]
    expected = statistics.mean(replies[i][1] for i in top_two)
    assert expected != statistics.mean(r for _, r in replies)  # nearness matters here
    mean = await answer(hashed_knn(rated_train, k=2), rating_hint(query))
    assert mean["rating"] == pytest.approx(expected, abs=1e-3)
    outcome = await answer(nearest, outcome_hint("I failed my driving test again."))
    assert outcome == {"final_intensity": 4.0, "empathy": 1.0}
    every = hashed_knn(rated_train, k=3)
    means = await answer(every, outcome_hint("I failed my driving test again."))
    assert means["empathy"] == pytest.approx(statistics.mean([5, 4, 1]), abs=1e-3)


async def test_a_train_split_without_a_kinds_gold_does_not_answer_it(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    write_conversations(plain, read_conversations(sample_path())[:2])  # no feedback, no outcome
    for provider in (make_provider("baseline/majority", train=str(plain)), hashed_knn(plain, 1)):
        assert not provider.answers("rating")
        assert f"{plain} has no rating gold" in provider.unsupported_reason("rating")
        with pytest.raises(Exception, match="no answer for 'rating' items"):
            await provider.generate([], PARAMS, rating_hint("x"))


# --- ESConv -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def esconv_train(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ESConv's train split (a conversation-level emotion each) and its failed sessions (the
    seekers' per-turn feedback, so replies with ratings), imported as `data import` does."""
    source = data_dir / "esconv"
    conversations = [
        *ESConvImporter(variant="hf", split="train").read(source, Counter()),
        *ESConvImporter(variant="failed", split="all").read(source, Counter()),
    ]
    path = tmp_path_factory.mktemp("esconv") / "train.jsonl"
    write_conversations(path, conversations)
    return path


def rated_pairs(conversations: list[Conversation]) -> list[tuple[str, str]]:
    """(chosen, rejected) for two rated replies of one conversation whose ratings differ."""
    pairs = []
    for conversation in conversations:
        rated = [
            (r.text, r.rating)
            for t in conversation.turns
            if t.preference is None
            for r in t.responses
            if r.rating is not None
        ]
        for (a, ra), (b, rb) in combinations(rated, 2):
            if ra != rb:
                pairs.append((a, b) if ra > rb else (b, a))
    return pairs


async def test_esconv_conversation_emotions_and_rating_pairs_are_learned(
    esconv_train: Path,
) -> None:
    conversations = read_conversations(esconv_train)
    train = load_train_set(esconv_train)
    level = [c for c in conversations if conversation_level(c)]
    assert len(level) > 1000 and len(train.emotion) == len(level)
    emotions = Counter(str(c.context.emotion) for c in level)
    pairs = rated_pairs(conversations)
    assert len(pairs) > 1000 and len(train.preference) == len(pairs)

    majority = make_provider("baseline/majority", train=str(esconv_train))
    labels = tuple(sorted(emotions))
    guess = await answer(majority, TaskHint("emotion", text="hello", labels=labels))
    assert guess["primary"] == emotions.most_common(1)[0][0]
    openings = [c.turns[0].state.intensity for c in level if c.turns[0].state is not None]
    assert guess["intensity"] == statistics.median(i for i in openings if i is not None)

    longer = sum(len(chosen) > len(rejected) for chosen, rejected in pairs)
    shorter = sum(len(chosen) < len(rejected) for chosen, rejected in pairs)
    pick = await answer(
        majority, TaskHint("preference", candidates={"A": "Short.", "B": "A longer reply."})
    )
    assert pick["choice"] == longer_of("Short.", "A longer reply.", prefer_longer=longer >= shorter)


async def test_esconv_knn_finds_a_conversation_by_its_opening_and_keeps_its_vectors(
    esconv_train: Path, tmp_path: Path
) -> None:
    conversations = [c for c in read_conversations(esconv_train) if conversation_level(c)]
    encoder = HashEncoder()
    provider = hashed_knn(esconv_train, 1, encoder)
    kinds = frozenset({"emotion", "preference"})
    await provider.prepare(Preparation(kinds, tmp_path))
    # Each distinct training text of a kind is embedded once (replies recur across pairs).
    emotion_texts = {e.text for e in provider.train.emotion}
    reply_texts = {t for e in provider.train.preference for t in (e.chosen, *e.rejected)}
    assert encoder.encoded == len(emotion_texts) + len(reply_texts)
    target = conversations[123]
    opening = provider.train.emotion[123].text  # the conversation's opening words, as learned
    assert target.turns[0].user in opening
    labels = tuple(sorted({str(c.context.emotion) for c in conversations}))
    found = await answer(provider, TaskHint("emotion", text=opening, labels=labels))
    assert found["primary"] == target.context.emotion

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
