"""ConvAI1: the counts in convai1/SOURCE.md, and how thumbs and dialogue ratings are mapped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from import_harness import imported, prefixed

from attunebench.data.importers import ConvAI1Importer, ImportFormatError, ImportOptionError


@pytest.mark.parametrize(
    ("split", "counts", "thumbs", "quality"),
    [
        (
            "train",
            (2501, 2101, 400, 2396, 27_440, 11_364, 1186),
            {"down": 3735, "up": 2630, "unrated": 4999},
            {"1": 1109, "2": 427, "3": 317, "4": 146, "5": 102},
        ),
        (
            "test",
            (277, 236, 41, 263, 2994, 1238, 121),
            {"down": 402, "up": 287, "unrated": 549},
            {"1": 122, "2": 61, "3": 30, "4": 13, "5": 10},
        ),
    ],
)
def test_counts_match_the_source(
    data_dir: Path,
    tmp_path: Path,
    split: str,
    counts: tuple[int, ...],
    thumbs: dict[str, int],
    quality: dict[str, int],
) -> None:
    conversations, result = imported(
        ConvAI1Importer(split=split), data_dir / "convai1", tmp_path / "convai1.jsonl"
    )
    t = result.tally
    assert (
        t["dialogues"],
        t["dialogues:human-bot"],
        t["dialogues:human-human"],
        t["non-empty"],
        t["messages"],
        t["bot messages"],
        t["human-bot dialogues with a rated bot message"],
    ) == counts
    assert prefixed(t, "bot thumbs") == thumbs
    assert prefixed(t, "human-bot quality") == quality
    # human-bot only, every reply a bot's, every label the human's own
    assert all(
        r.model == "convai1-bot" for c in conversations for t_ in c.turns for r in t_.responses
    )
    assert {c.context.labels["partner"] for c in conversations} == {"model"}
    assert conversations[0].source.provenance == {
        "rating": "first-person",
        "outcome": "first-person",
    }
    # every imported thumb is a reply rating, an opening's thumb, or an empty message's thumb
    ratings = [r.rating for c in conversations for t_ in c.turns for r in t_.responses]
    kept = sum(rating is not None for rating in ratings)
    assert 0 < kept <= thumbs["down"] + thumbs["up"]


def test_human_human_thumbs_and_both_sides(data_dir: Path, tmp_path: Path) -> None:
    conversations, result = imported(
        ConvAI1Importer(variant="human-human", split="train"),
        data_dir / "convai1",
        tmp_path / "hh.jsonl",
    )
    human = prefixed(result.tally, "human thumbs")
    assert (human["up"], human["down"]) == (2118, 321)
    assert sum(human.values()) == 27_440 - 11_364  # every human message, bots rated none
    assert {c.context.labels["partner"] for c in conversations} == {"person"}
    assert {c.id.rsplit("-", 1)[1] for c in conversations} == {"Alice", "Bob"}
    assert all(r.model == "human" for c in conversations for t in c.turns for r in t.responses)


def _chat(**overrides: Any) -> dict[str, Any]:
    chat: dict[str, Any] = {
        "dialogId": 7,
        "context": "A paragraph about owls.",
        "users": [{"id": "Alice", "userType": "Bot"}, {"id": "Bob", "userType": "Human"}],
        "thread": [
            {"userId": "Alice", "text": "Hello!", "evaluation": 2},
            {"userId": "Bob", "text": "Hi. Owls?", "evaluation": 0},
            {"userId": "Alice", "text": "Owls hunt at night.", "evaluation": 2},
            {"userId": "Alice", "text": "Do you like pizza?", "evaluation": 1},
            {"userId": "Bob", "text": "Not now.", "evaluation": 0},
            {"userId": "Alice", "text": " ", "evaluation": 1},
            {"userId": "Alice", "text": "Bye.", "evaluation": 1},
        ],
        "evaluation": [
            {"userId": "Alice", "quality": 2, "breadth": 0, "engagement": 4},
            {"userId": "Bob", "quality": 0, "breadth": 0, "engagement": 0},
        ],
    }
    return chat | overrides


def _write(folder: Path, train: list[dict[str, Any]], test: list[dict[str, Any]]) -> Path:
    folder.mkdir(exist_ok=True)
    for split, chats in (("train", train), ("test", test)):
        (folder / f"data_{split}_1501534800.json").write_text(json.dumps(chats), "utf-8")
    return folder


def test_a_thumb_rates_its_message_and_is_asked_at_the_next_turn(tmp_path: Path) -> None:
    people = [{"id": "Alice", "userType": "Human"}, {"id": "Bob", "userType": "Human"}]
    folder = _write(tmp_path / "convai1", [_chat(), _chat(dialogId=8, users=people)], [])
    (bot,), result = imported(ConvAI1Importer(split="train"), folder, tmp_path / "out.jsonl")
    assert bot.id == "convai1-train-7" and bot.context.opening == "Hello!"
    assert [t.user for t in bot.turns] == ["Hi. Owls?", "Not now."]
    first, second = bot.turns
    # a merged run of two messages, one up and one down: the share of thumbs up
    assert first.responses[0].text == "Owls hunt at night.\nDo you like pizza?"
    assert first.responses[0].rating == 0.5 and second.feedback == 0.5
    assert second.responses[0].rating == 0.0 and first.feedback is None
    # the human's ratings are the entry naming the bot; 0 means not given
    assert bot.outcome is not None and bot.outcome.survey == {"quality": 2.0, "engagement": 4.0}
    assert result.dropped() == {
        "dialogue ratings not given (0)": 1,
        "labels of opening utterances": 1,
        "messages with empty text": 1,
        "thumbs on messages with empty text": 1,
    }
    # the human-human chat is the other variant: read from each side, never mixed in
    both, _ = imported(ConvAI1Importer(variant="human-human"), folder, tmp_path / "hh.jsonl")
    assert [c.id for c in both] == ["convai1-train-8-Alice", "convai1-train-8-Bob"]
    alice, bob = both
    # Alice gave Bob's messages no thumb (0); Bob's thumbs on Alice's are his replies' ratings
    assert alice.context.opening is None and alice.turns[0].user == "Hello!"
    assert [r.rating for t in alice.turns for r in t.responses] == [None, None]
    assert [r.rating for t in bob.turns for r in t.responses] == [0.5, 0.0]
    assert bob.outcome is not None and bob.outcome.survey == {"quality": 2.0, "engagement": 4.0}
    assert alice.outcome is None  # Alice gave 0/0/0: not rated


def test_bad_input_is_located(tmp_path: Path) -> None:
    folder = _write(
        tmp_path / "convai1", [_chat(thread=[{"userId": "Bob", "text": "x", "evaluation": 5}])], []
    )
    with pytest.raises(
        ImportFormatError, match=r"data_train_1501534800\.json: dialogue 0: thread\[0\]\.evaluation"
    ):
        imported(ConvAI1Importer(split="train"), folder, tmp_path / "out.jsonl")
    with pytest.raises(ImportOptionError, match=r"neither data_1501534800\.tar\.gz"):
        imported(ConvAI1Importer(split="train"), tmp_path, tmp_path / "out.jsonl")


def test_the_command_line_keeps_the_variants_apart(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from attunebench.cli import app

    people = [{"id": "Alice", "userType": "Human"}, {"id": "Bob", "userType": "Human"}]
    folder = _write(tmp_path / "convai1", [_chat()], [_chat(dialogId=9, users=people)])
    out = tmp_path / "c.jsonl"
    for variant, ids in (
        ("human-bot", ["convai1-train-7"]),
        ("human-human", ["convai1-test-9-Alice", "convai1-test-9-Bob"]),
    ):
        args = ["data", "import", "convai1", str(folder), "--out", str(out), "--variant", variant]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ids


def test_the_judge_audits_pair_and_score_the_thumbed_bot_replies(
    data_dir: Path, tmp_path: Path
) -> None:
    from attunebench.tasks import load_tasks

    conversations, _ = imported(
        ConvAI1Importer(split="test"), data_dir / "convai1", tmp_path / "convai1.jsonl"
    )
    audit = load_tasks().get("judge_audit")(participant_context="blind")
    golds = [item.gold for item in audit.items(conversations)]
    assert len(golds) > 100 and all(g.across_turns and g.derived for g in golds)
    # balanced: the liked reply came first in as many pairs as it came later
    assert sum(g.chosen == g.first for g in golds) * 2 == len(golds)
    thumbs = load_tasks().get("judge_thumbs")(participant_context="blind")
    liked = [item.gold.liked for item in thumbs.items(conversations)]
    assert len(liked) > 500 and 0 < sum(liked) < len(liked)
    print(f"ConvAI1 test, blind: {len(golds)} pairs, {len(liked)} thumbs ({sum(liked)} up)")


def test_response_items_at_the_bots_replies_with_the_humans_thumb(tmp_path: Path) -> None:
    from attunebench.tasks import load_tasks

    folder = _write(tmp_path / "convai1", [_chat()], [])
    (bot,), _ = imported(ConvAI1Importer(split="train"), folder, tmp_path / "out.jsonl")
    response = load_tasks().get("response")(context="blind")
    items = list(response.items([bot]))
    # the opening "Hello!" answers no message of the human's: not an item
    assert [(i.turn_index, i.gold.real_text) for i in items] == [
        (0, "Owls hunt at night.\nDo you like pizza?"),
        (1, "Bye."),
    ]
    # a merged run rated half up, half down has no thumb; "Bye." got a thumb down
    assert [i.gold.real_liked for i in items] == [None, False]


def test_response_items_on_the_real_corpus(data_dir: Path, tmp_path: Path) -> None:
    from attunebench.tasks import load_tasks

    conversations, _ = imported(
        ConvAI1Importer(split="test"), data_dir / "convai1", tmp_path / "convai1.jsonl"
    )
    response = load_tasks().get("response")(context="blind")
    items = list(response.items(conversations))
    # every human message the bot answered (not a last one left unanswered)
    answered = sum(bool(t.responses) for c in conversations for t in c.turns)
    assert 0 < len(items) == answered
    assert all(i.gold.real == "partner" and i.gold.chosen is None for i in items)
    # the thumbs are the ones the pointwise judge audit scores
    thumbs = load_tasks().get("judge_thumbs")(participant_context="blind")
    audited = {(i.conversation.id, i.turn_index): i.gold.liked for i in thumbs.items(conversations)}
    mine = {(i.conversation.id, i.turn_index): i.gold.real_liked for i in items}
    assert {k: v for k, v in mine.items() if v is not None} == audited
    liked = sum(v is True for v in mine.values())
    print(f"ConvAI1 test: {len(items)} response items, {len(audited)} with a thumb ({liked} up)")
