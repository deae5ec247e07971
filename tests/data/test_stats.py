"""Dataset stats: counts on a hand-built dataset whose answers can be worked out by reading it,
and each registered task's gold, asked of the registry (`tasks.helpers.gold_stats`)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from attunebench.cli import app
from attunebench.data import Conversation, read_conversations, write_conversations
from attunebench.data.sample import sample_path
from attunebench.data.stats import compute_stats
from attunebench.tasks import load_tasks
from attunebench.tasks.helpers.gold_stats import GoldStats
from registered import gold_stats

SOURCE = {"kind": "simulated", "name": "unit", "provenance": {"state": "first-person"}}


def _reply(
    rid: str, rating: float | None, behaviors: tuple[str, ...] = (), model: str = "m1"
) -> dict[str, object]:
    reply: dict[str, object] = {
        "id": rid,
        "model": model,
        "text": f"reply {rid}",
        "behaviors": list(behaviors),
    }
    if rating is not None:
        reply["rating"] = rating
    return reply


def dataset() -> list[Conversation]:
    first = {
        "id": "c1",
        "source": SOURCE,
        "participant": {"id": "p1", "traits": {"age_band": "18-24"}},
        "taxonomy": "attunebench-default",
        "turns": [
            {
                "index": 0,
                "user": "hi",
                "state": {"emotions": ["anxiety", "fear"], "primary": "fear", "intensity": 3},
                "responses": [
                    _reply("a", 1, ("lecturing",)),
                    _reply("b", 3, ("validation", "question"), "m2"),
                ],
                "need": {"text": "to be heard"},
                "preference": {"chosen": "b", "strength": 2},
            },
            {
                "index": 1,
                "user": "and then",
                "responses": [_reply("a", 2), _reply("b", 2), _reply("c", 4, ("question",))],
                "need": {"behaviors": ["reflection"]},
                "preference": {"tie": True},
            },
        ],
    }
    second = {
        "id": "c2",
        "source": SOURCE,
        "taxonomy": "attunebench-default",
        "context": {"emotion": "sadness"},
        "turns": [
            {
                "index": 0,
                "user": "one",
                "state": {"valence": -0.5, "arousal": 0.2},
                "responses": [_reply("a", 5)],
            },
            {
                "index": 1,
                "user": "two",
                "responses": [_reply("a", 5)],
                "preference": {"chosen": "a"},
            },
        ],
    }
    return [Conversation.model_validate(c) for c in (first, second)]


def test_counts_and_gold() -> None:
    s = gold_stats(dataset())
    assert (s.conversations, s.turns, s.responses) == (2, 4, 7)
    assert (s.participants, s.conversations_without_participant) == (1, 1)
    assert s.responses_per_turn == {1: 2, 2: 1, 3: 1}
    assert s.emotions == {"anxiety": 1, "fear": 1}
    assert s.primary == {"fear": 1}
    assert s.behaviors == {"question": 2, "lecturing": 1, "validation": 1}
    assert s.context_emotions == {"sadness": 1}
    assert (s.coverage.intensity, s.coverage.valence, s.coverage.arousal, s.coverage.panas) == (
        1,
        1,
        1,
        0,
    )
    assert s.traits == {"age_band": {"18-24": 1}}
    assert s.provenance == {"state": {"first-person": 2}}
    assert (s.turns_with_state, s.responses_with_behaviors, s.turns_with_wanted_behaviors) == (
        2,
        3,
        1,
    )
    emotion, preference, response = (s.gold[t] for t in ("emotion", "preference", "response"))
    assert emotion == {"turns_with_state": 2, "conversations_with_context_emotion": 1, "items": 2}
    assert s.gold["behavior"] == {"responses_with_behaviors": 3, "items": 3}
    # c2 turn 1 chooses its only reply: a recorded pick, but not a pair to compare.
    assert (preference["turns_with_pick"], preference["picks"], preference["ties"]) == (2, 1, 1)
    assert s.pick_position == {2: 1}
    assert s.picks_by_model == {"m2": 1}
    assert s.pick_strength == {2: 1}
    # turn (1, 3): one pair; turn (2, 2, 4): (2,4) twice; c2's two 5s differ from nothing.
    assert preference["rating_pairs_within_turns"] == 3
    assert preference["turns_with_rating_pairs"] == 2
    assert preference["conversations_with_rating_pairs"] == 1
    assert (response["turns"], response["with_chosen_reply"]) == (3, 2)
    assert (response["with_wanted_text"], response["with_wanted_behaviors"]) == (1, 1)
    # seven replies carry ratings, but nobody declared who gave them: no rating gold
    assert s.rated_responses == 7 and s.gold["rating"]["responses"] == 0
    assert s.gold["outcome"]["conversations"] == 0
    declared = {kind: who for kind, who in s.given_by.items() if kind not in s.gold}
    assert declared == {"context emotion": {"not declared": 1}, "rating pairs": {"not declared": 1}}
    assert {task: s.given_by[task] for task in ("emotion", "behavior", "preference")} == {
        "emotion": {"first-person": 2},
        "behavior": {"not declared": 3},
        "preference": {"not declared": 2},
    }
    assert s.given_by["response"] == {"not declared": 3}


def test_every_registered_task_has_its_items_and_who_gave_them() -> None:
    """A task that counts nothing of its own (the judges' audits, the tests' toy task) is
    counted by its items, given by the provenance of its `gold_fields`."""
    for conversations in (dataset(), read_conversations(sample_path())):
        s = gold_stats(conversations)
        assert list(s.gold) == list(load_tasks())
        for name in load_tasks():
            task = load_tasks().get(name)()
            items = sum(1 for _ in task.items(conversations))
            assert s.gold[name]["items"] == items, name
            if not task.gold_counts([]).counts:
                assert s.gold[name] == {"items": items}
                who = conversations[0].source.provenance.get(task.gold_fields[0], "not declared")
                assert s.given_by.get(name, {}) == ({who: items} if items else {}), name


def _seeker(
    turns: list[dict[str, object]], outcome: dict[str, object], who: dict[str, str]
) -> Conversation:
    return Conversation.model_validate(
        {
            "id": f"s-{len(turns)}-{'-'.join(outcome)}-{'-'.join(who.values())}",
            "source": {"kind": "imported", "name": "support", "provenance": who},
            "taxonomy": "attunebench-default",
            "turns": turns,
            "outcome": outcome,
        }
    )


def test_outcome_and_rating_gold_and_who_gave_it() -> None:
    person = {"rating": "first-person", "outcome": "first-person", "behaviors": "actor"}
    rated = _seeker(
        [
            {
                "index": 0,
                "user": "a",
                "state": {"intensity": 4},
                "responses": [_reply("r", 2, ("question",))],
            },
            {"index": 1, "user": "b", "responses": [_reply("r", 2)]},
            {"index": 2, "user": "c", "responses": [_reply("r", None)], "feedback": 2},
        ],
        {"final_state": {"intensity": 2}, "survey": {"empathy": 4, "relevance": 5, "note": "ok"}},
        {**person, "state.intensity": "first-person"},
    )
    no_start = _seeker(
        [{"index": 0, "user": "a", "responses": [_reply("r", 5)]}],
        {"final_state": {"intensity": 1}, "survey": {"empathy": 2}},
        person,
    )
    annotated = _seeker(
        [{"index": 0, "user": "a"}, {"index": 1, "user": "b", "responses": [_reply("r", 3)]}],
        {"rating": 3},
        {"rating": "third-party", "outcome": "third-party"},
    )
    comment_only = _seeker([{"index": 0, "user": "a"}], {"survey": {"note": "fine"}}, person)
    s = gold_stats([rated, no_start, annotated, comment_only])
    outcome, rating = s.gold["outcome"], s.gold["rating"]
    assert outcome["conversations"] == 3  # a comment alone is nothing to predict a number of
    assert (outcome["with_final_intensity"], outcome["with_intensity_change"]) == (2, 1)
    assert outcome["with_rating"] == 1
    assert outcome["survey_ratings"] == {"empathy": 2, "relevance": 1}
    # the annotators' satisfaction ratings are not the person's own
    # one feedback on turn 2 rated both replies before it; the other person's went uncollected
    assert (rating["responses"], rating["feedback_turns"], rating["conversations"]) == (3, 1, 2)
    # one rated reply is an item itself: the one of the conversation with no feedback
    assert rating["reply_items"] == 1
    assert s.given_by["outcome"] == {"first-person": 2, "third-party": 1}
    assert s.given_by["rating"] == {"first-person": 3}
    assert s.given_by["feedback"] == {"first-person": 1}
    assert s.given_by["behavior"] == {"actor": 1}
    assert s.given_by["emotion"] == {"first-person": 1}


def test_sample_stats_agree_with_the_conversations() -> None:
    conversations = read_conversations(sample_path())
    s = compute_stats(conversations)
    turns = [t for c in conversations for t in c.turns]
    assert s.turns == len(turns) == sum(k * v for k, v in s.turns_per_conversation.items())
    picks = gold_stats(conversations).gold["preference"]["picks"]
    assert sum(s.picks_by_model.values()) == picks == sum(s.pick_position.values())
    assert sum(s.primary.values()) == sum(1 for t in turns if t.state and t.state.primary)


def test_cli_json_matches_the_library(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    write_conversations(path, dataset())
    result = CliRunner().invoke(app, ["data", "stats", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert GoldStats.model_validate(json.loads(result.output)) == gold_stats(dataset())


def test_cli_tables_and_invalid_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["data", "stats", str(sample_path())])
    assert result.exit_code == 0, result.output
    assert "Gold per task" in result.output and "preference" in result.output
    assert "self-reported" not in result.output
    given = gold_stats(read_conversations(sample_path())).given_by["emotion"]
    assert list(given) == ["illustrative"]
    # One row per registered task: its items (Task.items) and who gave their gold.
    rows = {line.split()[0]: line.split() for line in result.output.splitlines() if "│" in line}
    for name in load_tasks():
        items = sum(1 for _ in load_tasks().get(name)().items(read_conversations(sample_path())))
        assert rows[name][2] == str(items), rows[name]
    assert rows["emotion"][-1] == "illustrative"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["data", "stats", str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:1: malformed JSON" in result.output
