"""References fitted out of sample: planted truths.

A corpus is drawn here with every task's gold (a self-reported state at each message, labelled
and rated replies, feedback, an end survey), its lengths and positions drawn at random:

- known trap: on gold shuffled across conversations, every reference a task declares scores
  chance on its headline when fitted as the report fits it (cross-fitted by conversation), and
  length-only fitted in sample, as references were before, scores above it;
- known answer: where a length really predicts the answer, length-only still finds it out
  of sample, cross-fitted or fitted on a train split;
- the summary says how each reference row was fitted, and a train split must not share the
  evaluated conversations.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attunebench.analysis import Options, build_summary, load_runs
from attunebench.analysis.references.predictors import guessed_views
from attunebench.data.jsonl import write_conversations
from attunebench.data.schema import (
    Context,
    Conversation,
    Outcome,
    RatingScale,
    Response,
    Source,
    State,
    Turn,
)
from attunebench.engine.runner import RunConfig, run
from attunebench.models.modelsfile import ModelEntry
from attunebench.tasks import load_tasks
from attunebench.tasks.base import Guess, Item, Scored, Task
from attunebench.tasks.emotion import EmotionPrediction
from attunebench.tasks.helpers.fitting import folds, out_of_sample, train_items
from planted.shuffled_gold import headline, item_views, references_on_shuffled_gold

EMOTIONS = ("joy", "anxiety", "sadness", "anger", "relief")
BEHAVIORS = ("question", "reassurance", "suggestion", "validation")
SHUFFLES = 200
WITHIN = 0.03


def words(rng: np.random.Generator, count: int) -> str:
    return " ".join("word" for _ in range(count)) + "."


def planted_turn(rng: np.random.Generator, index: int, feedback: float | None) -> Turn:
    """A turn with a reported state and a labelled, rated reply, and `feedback` on the reply
    before it."""
    return Turn(
        index=index,
        user=words(rng, int(rng.integers(2, 40))),
        state=State(primary=str(rng.choice(EMOTIONS)), intensity=float(rng.integers(1, 6))),
        responses=(
            Response(
                id="a",
                text=words(rng, int(rng.integers(3, 60))),
                behaviors=tuple(rng.choice(BEHAVIORS, size=int(rng.integers(1, 3)), replace=False)),
                rating=float(rng.integers(1, 6)),
            ),
        ),
        continued="a",
        feedback=feedback,
    )


def planted_corpus(
    conversations: int, seed: int, rating_of: Callable[[int], float] | None = None
) -> list[Conversation]:
    """Conversations of 4 to 9 turns whose every gold is drawn at random (or, with
    `rating_of`, whose feedback at every turn but the first follows the length of the reply
    it rates, in characters)."""
    rng = np.random.default_rng(seed)
    out = []
    for c in range(conversations):
        turns: list[Turn] = []
        for i in range(int(rng.integers(4, 10))):
            before = turns[-1].responses[0].text if turns else ""
            drawn = float(rng.integers(1, 6))
            rated = None if not turns else rating_of(len(before)) if rating_of else drawn
            turns.append(planted_turn(rng, i, rated))
        out.append(
            Conversation(
                id=f"planted-{seed}-{c}",
                source=Source(
                    kind="simulated", name="planted", rating_scale=RatingScale(low=1, high=5)
                ),
                taxonomy="attunebench-default",
                context=Context(),
                turns=tuple(turns),
                outcome=Outcome(
                    final_state=State(intensity=float(rng.integers(1, 6))),
                    rating=float(rng.integers(1, 6)),
                ),
            )
        )
    return out


def fitted_tasks() -> list[str]:
    """Every task with a reference that fits something."""
    return [
        name
        for name in load_tasks().names()
        if any(r.fit is not None for r in load_tasks().get(name)().scoring.references().values())
    ]


def blind_items(task: Task[Any, Any], conversations: list[Conversation]) -> list[Item[Any]]:
    return [item for item in task.items(conversations) if item.variant in ("", "blind")]


def test_folds_are_whole_conversations_seeded_and_even() -> None:
    ids = [f"c{i // 3}" for i in range(90)]  # 30 conversations of 3 items
    dealt = folds(ids, seed=4)
    assert dealt == folds(ids, seed=4) and dealt != folds(ids, seed=5)
    by_conversation = {c: {k for cid, k in zip(ids, dealt, strict=True) if cid == c} for c in ids}
    assert all(len(found) == 1 for found in by_conversation.values())
    assert sorted(np.bincount(dealt).tolist()) == [18] * 5  # 6 conversations each


def test_a_references_guesses_become_views_of_the_items_they_guess() -> None:
    # Planted: 12 emotion items, a guess per item naming its position, every third item not
    # guessed. Known answer: each view is its own item's, with its guess and score, and its
    # index. A trap: guesses left out between the guessed ones, so that a view paired with the
    # next item's guess, or an index miscounted, shows.
    items = blind_items(load_tasks().get("emotion")(), planted_corpus(4, seed=2))[:12]
    views = item_views(items)
    guesses: list[Guess] = [
        None if i % 3 == 1 else (EmotionPrediction(primary=f"at {i}"), Scored(float(i)))
        for i in range(len(items))
    ]
    shown, kept = guessed_views(views, guesses)
    assert kept == [i for i in range(12) if i % 3 != 1]
    for view, i in zip(shown, kept, strict=True):
        assert view.record is views[i].record and view.gold is views[i].gold
        assert view.prediction == EmotionPrediction(primary=f"at {i}")
        assert view.score == float(i)
        assert view.status == "ok" and view.parsed
    every = [(EmotionPrediction(primary="joy"), Scored(1.0)) for _ in items]
    assert guessed_views(views, list(every))[1] == list(range(12))
    with pytest.raises(ValueError, match="11 guesses for 12 items"):
        guessed_views(views, guesses[:11])


@pytest.mark.parametrize("name", fitted_tasks())
def test_every_reference_fitted_out_of_sample_scores_chance_on_shuffled_gold(name: str) -> None:
    task = load_tasks().get(name)()
    items = blind_items(task, planted_corpus(24, seed=1))
    assert items, name
    found = references_on_shuffled_gold(task, items, shuffles=SHUFFLES, seed=2)
    for reference, result in found.items():
        if result.mean is None:
            continue  # a cue with nothing to read on these items (no pair across turns)
        assert result.chance is not None
        assert abs(result.mean - result.chance) <= WITHIN, (reference, result)


def test_length_only_fitted_in_sample_beats_chance_on_shuffled_gold() -> None:
    """The trap the references fell into: their own items' answers in the group means."""
    task = load_tasks().get("outcome")()
    items = blind_items(task, planted_corpus(24, seed=3))
    result = references_on_shuffled_gold(task, items, shuffles=SHUFFLES, seed=4)[
        "reference/length-only"
    ]
    assert result.mean is not None and result.chance is not None
    assert result.in_sample is not None
    assert result.in_sample - result.chance > 0.1
    assert abs(result.mean - result.chance) <= WITHIN


def headline_of(task: Task[Any, Any], items: list[Item[Any]], fitted: Any) -> float:
    metric = task.scoring.metric()
    value = headline(metric, item_views(items), [i.gold for i in items], fitted)
    assert value is not None
    return value


def test_a_length_that_predicts_the_rating_is_found_out_of_sample() -> None:
    def by_length(chars: int) -> float:
        return float(min(5, 1 + chars // 60))

    task = load_tasks().get("rating")()
    items = blind_items(task, planted_corpus(40, seed=5, rating_of=by_length))
    golds, ids = [i.gold for i in items], [i.conversation.id for i in items]
    reference = task.scoring.references()["reference/length-only"]
    crossed = out_of_sample(reference, golds, ids, seed=0)
    assert crossed.fit == "cross-fitted" and headline_of(task, items, crossed) > 0.6
    train = [i.gold for i in blind_items(task, planted_corpus(40, seed=6, rating_of=by_length))]
    on_train = out_of_sample(reference, golds, ids, train)
    assert on_train.fit == "train" and headline_of(task, items, on_train) > 0.6
    constant = out_of_sample(task.scoring.references()["reference/constant"], golds, ids, train)
    assert headline_of(task, items, constant) == pytest.approx(0.0, abs=1e-9)


def test_a_train_split_is_read_as_the_task_builds_items() -> None:
    task = load_tasks().get("rating")(context="both")
    corpus = planted_corpus(3, seed=7)
    informed = train_items(task, corpus, "informed")
    assert informed and {i.variant for i in informed} == {"informed"}
    first = train_items(task, corpus)
    assert len(first) == len(informed) and {i.variant for i in first} == {"blind"}


def reference_fits(summary: Any) -> dict[tuple[str, str], str | None]:
    return {(r.task, r.model): r.fit for r in summary.scores if r.model_kind == "reference"}


def test_the_summary_says_how_each_reference_was_fitted(tmp_path: Path) -> None:
    data, train = tmp_path / "data.jsonl", tmp_path / "train.jsonl"
    write_conversations(data, planted_corpus(12, seed=8))
    write_conversations(train, planted_corpus(12, seed=9))
    config = RunConfig(
        data=data,
        out=tmp_path / "run",
        models=(ModelEntry(spec="baseline/random", name="baseline/random"),),
        tasks=("rating", "preference"),
        cache_path=None,
        progress=False,
    )
    asyncio.run(run(config))
    runs = load_runs([tmp_path / "run"])
    crossed = reference_fits(build_summary(runs, Options(resamples=100)))
    assert crossed[("rating", "reference/length-only")] == "cross-fitted"
    assert crossed[("preference", "reference/longer-reply")] == "none"
    assert crossed[("preference", "reference/visible-position-classifier")] == "cross-fitted"
    fitted = reference_fits(build_summary(runs, Options(resamples=100, train=train)))
    assert fitted[("rating", "reference/length-only")] == "train"
    assert fitted[("rating", "reference/constant")] == "train"
    with pytest.raises(ValueError, match="shares 12 conversations"):
        build_summary(runs, Options(resamples=100, train=data))


def pre_chat(cid: str, start: float, final: float) -> Conversation:
    """A conversation whose person reported `start` before it and `final` after."""
    turns = (
        Turn(index=0, user="I feel low today.", state=State(intensity=start)),
        Turn(index=1, user="Thank you for listening."),
    )
    return Conversation(
        id=cid,
        source=Source(kind="simulated", name="planted"),
        taxonomy="attunebench-default",
        context=Context(),
        turns=turns,
        outcome=Outcome(final_state=State(intensity=final)),
    )


def test_the_informed_references_read_the_self_report_the_informed_prompt_shows() -> None:
    """Where the final intensity is the pre-chat intensity less one (the rule that scores
    0.130 on ESConv's outcome), the informed context's self-report reference finds it out of
    sample; the blind context, whose prompt shows no report, has no such reference."""
    rng = np.random.default_rng(10)
    starts = rng.integers(2, 6, 60).astype(float)
    corpus = [pre_chat(f"p{i}", s, s - 1) for i, s in enumerate(starts)]
    task = load_tasks().get("outcome")(context="both")
    assert "reference/self-report" not in task.scoring.references("blind")
    reference = task.scoring.references("informed")["reference/self-report"]
    items = [item for item in task.items(corpus) if item.variant == "informed"]
    golds, ids = [i.gold for i in items], [i.conversation.id for i in items]
    assert {g.reported for g in golds} == {f"|{s:g}" for s in starts}
    fitted = out_of_sample(reference, golds, ids, seed=0)
    assert headline_of(task, items, fitted) > 0.9
    # the length of the conversation, the same everywhere here, finds nothing
    length = out_of_sample(task.scoring.references("informed")["reference/length-only"], golds, ids)
    assert headline_of(task, items, length) == pytest.approx(0.0, abs=1e-9)
